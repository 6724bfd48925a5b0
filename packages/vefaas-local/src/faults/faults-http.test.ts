import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startVefaasLocal, type VefaasLocalHandle } from '../host.js';
import type { VefaasLocalOptions } from '../host-options.js';
import { callAction, okResult, swerexCommand } from '../../test/control-plane-caller.js';

const TOKEN = 't';
const hosts: VefaasLocalHandle[] = [];

async function start(options: VefaasLocalOptions): Promise<VefaasLocalHandle> {
  const host = await startVefaasLocal({ isolation: 'emulated', ...options });
  hosts.push(host);
  return host;
}

const createBody = (host: VefaasLocalHandle) => ({
  FunctionId: host.functionId,
  InstanceImageInfo: { Image: 'img:1', Command: swerexCommand(TOKEN), Port: 8000 },
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

describe('fault injection over HTTP', () => {
  it('reproduces the same control-plane faults with the same seed', async () => {
    const faults = { seed: 99, controlPlane: { errorRate: 0.4 } };
    const run = async (host: VefaasLocalHandle) => {
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++)
        statuses.push((await callAction(host, 'ListSandboxes', { FunctionId: host.functionId })).status);
      return statuses;
    };
    const first = await run(await start({ faults }));
    const second = await run(await start({ faults }));
    expect(first).toEqual(second);
    expect(new Set(first)).toEqual(new Set([200, 500]));
  });

  it('controlPlane.answer: the named action answers the given veFaaS error and does not run; other actions run', async () => {
    const host = await start({
      faults: {
        controlPlane: {
          answer: {
            ListSandboxes: { code: 'AccessDenied', status: 403 },
            KillSandbox: { code: 'InternalError', status: 500, message: 'kill failed' },
          },
        },
      },
    });
    const listed = await callAction(host, 'ListSandboxes', { FunctionId: host.functionId });
    expect(listed.status).toBe(403);
    expect(listed.envelope.ResponseMetadata.Error).toMatchObject({ Code: 'AccessDenied', CodeN: 100013 });
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', createBody(host));
    const killed = await callAction(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId });
    expect(killed.status).toBe(500);
    expect(killed.envelope.ResponseMetadata.Error).toMatchObject({ Code: 'InternalError', Message: 'kill failed' });
    // The refused kill did not run: the sandbox is still there, and runs once the fault is lifted.
    expect(host.sandboxCounts().total).toBe(1);
    host.faults.reset();
    expect((await callAction(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId })).status).toBe(200);
  });

  it('answers 429 AccountFlowLimitExceeded above N CreateSandbox per second', async () => {
    const host = await start({ faults: { throttle: { createPerSecond: 3 } } });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => callAction(host, 'CreateSandbox', createBody(host))),
    );
    const throttled = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(throttled).toHaveLength(5);
    expect(throttled[0]?.envelope.ResponseMetadata.Error).toMatchObject({
      Code: 'AccountFlowLimitExceeded',
      CodeN: 100027,
    });
    expect(host.sandboxCounts().total).toBe(3);
  });

  it('a token-bucket create limit (ratePerSecond + burst) admits the burst, then the rate', async () => {
    const host = await start({ faults: { throttle: { ratePerSecond: 2, burst: 4 } } });
    const results = await Promise.all(
      Array.from({ length: 7 }, () => callAction(host, 'CreateSandbox', createBody(host))),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    expect(results.filter((r) => r.status === 429)).toHaveLength(3);
    expect(host.faults.stats).toMatchObject({ throttled: 3, createsAdmitted: 4 });
  });

  it('a lost answer: CreateSandbox runs (the sandbox exists) but no answer comes', async () => {
    const host = await start({ faults: { controlPlane: { lostAnswer: { CreateSandbox: 1 } } } });
    const body = { ...createBody(host), Metadata: { 'rf-env': 'lost-1' } };
    await expect(callAction(host, 'CreateSandbox', body, { signal: AbortSignal.timeout(300) })).rejects.toThrow(
      /abort|timeout/i,
    );
    const listed = await okResult<{ Sandboxes: Array<{ Id: string; Metadata: Record<string, string> }> }>(
      host,
      'ListSandboxes',
      {
        FunctionId: host.functionId,
        Metadata: { 'rf-env': 'lost-1' },
      },
    );
    expect(listed.Sandboxes).toHaveLength(1);
    expect(host.faults.stats.lostAnswers).toBe(1);
  });

  it('slows one instance down at the gateway (admin), leaving others alone', async () => {
    const host = await start({});
    const [slow = '', quick = ''] = await Promise.all(
      [1, 2].map(
        async () => (await okResult<{ SandboxId: string }>(host, 'CreateSandbox', createBody(host))).SandboxId,
      ),
    );
    const set = await request(`${host.controlPlaneUrl}/_admin/sandboxes/${slow}/slow`, {
      method: 'POST',
      body: JSON.stringify({ latencyMs: 300 }),
    });
    expect(set.statusCode).toBe(200);
    expect(await set.body.json()).toEqual({ slowMs: 300 });
    const timed = async (id: string): Promise<number> => {
      const started = performance.now();
      const res = await request(`${host.gatewayUrl}/is_alive`, {
        headers: { 'x-faas-instance-name': id, 'x-api-key': TOKEN },
      });
      await res.body.text();
      return performance.now() - started;
    };
    expect(await timed(slow)).toBeGreaterThanOrEqual(290);
    expect(await timed(quick)).toBeLessThan(200);
    const bad = await request(`${host.controlPlaneUrl}/_admin/sandboxes/${slow}/slow`, {
      method: 'POST',
      body: '{"latencyMs":-1}',
    });
    expect(bad.statusCode).toBe(400);
    await bad.body.text();
    const listing = (await (await request(`${host.controlPlaneUrl}/_admin/sandboxes`)).body.json()) as {
      sandboxes: Array<{ id: string; slowMs: number }>;
    };
    expect(listing.sandboxes.find((s) => s.id === slow)?.slowMs).toBe(300);
  });

  it('counts usage as a bill would: sandboxes created, and sandbox-seconds from create until gone', async () => {
    const host = await start({});
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', createBody(host));
    expect(host.usage().created).toBe(1);
    await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId });
    await vi.waitFor(() => expect(host.sandboxCounts().total).toBe(0));
    const gone = host.usage().sandboxSeconds;
    expect(gone).toBeGreaterThan(0);
    expect(gone).toBeLessThan(5);
    expect(host.usage()).toEqual({ created: 1, sandboxSeconds: gone });
  });

  it('hangs a control-plane action without answering, others still answer', async () => {
    const host = await start({ faults: { controlPlane: { hang: { DescribeSandbox: 1 } } } });
    const hung = callAction(
      host,
      'DescribeSandbox',
      { FunctionId: host.functionId, SandboxId: 'x' },
      { signal: AbortSignal.timeout(300) },
    );
    await expect(hung).rejects.toThrow(/abort|timeout/i);
    expect((await callAction(host, 'ListSandboxes', { FunctionId: host.functionId })).status).toBe(200);
    expect(host.faults.stats.hangs).toBe(1);
  });

  it('hangs a SWE-ReX path and injects gateway 5xx', async () => {
    const host = await start({ faults: { gateway: { hang: { '/is_alive': 1 } } } });
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', createBody(host));
    const headers = { 'x-faas-instance-name': SandboxId, 'x-api-key': TOKEN };
    await expect(request(`${host.gatewayUrl}/is_alive`, { headers, signal: AbortSignal.timeout(300) })).rejects.toThrow(
      /abort|timeout/i,
    );
    host.faults.configure({ gateway: { errorRate: 1, errorStatus: 503 } });
    const failed = await request(`${host.gatewayUrl}/is_alive`, { headers });
    expect(failed.statusCode).toBe(503);
    expect(await failed.body.json()).toMatchObject({ error: { code: 'GatewayError' } });
  });

  it('an emulated `sleep N` takes N seconds (episodes that need to take time, without processes)', async () => {
    const host = await start({});
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', createBody(host));
    const headers = { 'x-faas-instance-name': SandboxId, 'x-api-key': TOKEN, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) =>
      (await request(`${host.gatewayUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).body.json();
    await post('/create_session', { session: 'default', session_type: 'bash' });
    const started = performance.now();
    const slept = await post('/run_in_session', { action_type: 'bash', session: 'default', command: 'sleep 0.3' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(slept).toMatchObject({ output: '', exit_code: 0 });
    const quick = performance.now();
    await post('/run_in_session', { action_type: 'bash', session: 'default', command: 'sleep 0.3 && echo no' });
    expect(performance.now() - quick).toBeLessThan(250);
  });

  it('kills the instance mid-request: the gateway answers as for a dead instance', async () => {
    const host = await start({ faults: { gateway: { instanceDeathRate: { '/execute': 1 } } } });
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', createBody(host));
    const response = await request(`${host.gatewayUrl}/execute`, {
      method: 'POST',
      headers: { 'x-faas-instance-name': SandboxId, 'x-api-key': TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'echo hi', shell: true }),
    });
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toEqual({
      error: { code: 'InstanceNotFound', message: `instance ${SandboxId} not found` },
    });
    expect((await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId }))['Status']).toBe(
      'Failed',
    );
  });

  it('fails CreateSandbox with a cold-start timeout and delays cold starts', async () => {
    const host = await start({ faults: { coldStart: { timeoutRate: 1 } } });
    const { status, envelope } = await callAction(host, 'CreateSandbox', createBody(host));
    expect(status).toBe(500);
    expect(envelope.ResponseMetadata.Error?.Code).toBe('UserTimeoutError');
    expect(envelope.ResponseMetadata.Error?.Message).toContain('function_cold_start_timeout');
    host.faults.configure({ coldStart: { delayMs: 250 }, controlPlane: { latencyMs: { ListSandboxes: 100 } } });
    const started = performance.now();
    await okResult(host, 'CreateSandbox', createBody(host));
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
    const listed = performance.now();
    await okResult(host, 'ListSandboxes', { FunctionId: host.functionId });
    expect(performance.now() - listed).toBeGreaterThanOrEqual(95);
  });

  it('is configured through the admin endpoint', async () => {
    const host = await start({});
    const set = await request(`${host.controlPlaneUrl}/_admin/faults`, {
      method: 'POST',
      body: JSON.stringify({ seed: 5, throttle: { createPerSecond: 0 } }),
    });
    expect(set.statusCode).toBe(200);
    await set.body.dump();
    const got = await request(`${host.controlPlaneUrl}/_admin/faults`);
    expect(await got.body.json()).toMatchObject({ config: { seed: 5, throttle: { createPerSecond: 0 } } });
    expect((await callAction(host, 'CreateSandbox', createBody(host))).status).toBe(429);
    const bad = await request(`${host.controlPlaneUrl}/_admin/faults`, {
      method: 'POST',
      body: JSON.stringify({ nope: 1 }),
    });
    expect(bad.statusCode).toBe(400);
    expect(await bad.body.json()).toMatchObject({ error: { code: 'InvalidFaultConfig' } });
  });
});
