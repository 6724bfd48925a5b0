import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVefaasLocal, type VefaasLocalHandle } from '../host.js';
import { callAction, okResult, swerexCommand } from '../../test/control-plane-caller.js';

const TOKEN = 'tok-123';

async function createSandbox(host: VefaasLocalHandle): Promise<string> {
  const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', {
    FunctionId: host.functionId,
    InstanceImageInfo: { Image: 'img:1', Command: swerexCommand(TOKEN), Port: 8000 },
  });
  return SandboxId;
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await request(url, { headers });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

describe('gateway (emulated sandboxes)', () => {
  let host: VefaasLocalHandle;
  let sandboxId: string;

  beforeAll(async () => {
    host = await startVefaasLocal({ isolation: 'emulated' });
    sandboxId = await createSandbox(host);
  });
  afterAll(async () => {
    await host.close();
  });

  it('routes by the X-Faas-Instance-Name header', async () => {
    const alive = await get(`${host.gatewayUrl}/is_alive`, { 'x-faas-instance-name': sandboxId, 'x-api-key': TOKEN });
    expect(alive).toEqual({ status: 200, body: { is_alive: true, message: '' } });
  });

  it('routes by the faasInstanceName query parameter and runs a session command', async () => {
    const pin = `?faasInstanceName=${sandboxId}`;
    const created = await post(
      `${host.gatewayUrl}/create_session${pin}`,
      { session: 'q', session_type: 'bash', startup_source: [], startup_timeout: 1 },
      { 'x-api-key': TOKEN },
    );
    expect(created).toEqual({ status: 200, body: { output: '', session_type: 'bash' } });
    const ran = await post(
      `${host.gatewayUrl}/run_in_session${pin}`,
      { command: 'echo hello', session: 'q', action_type: 'bash', check: 'raise' },
      { 'x-api-key': TOKEN },
    );
    expect(ran).toEqual({
      status: 200,
      body: {
        output: 'hello\n',
        exit_code: 0,
        failure_reason: '',
        expect_string: 'SHELLPS1PREFIX',
        session_type: 'bash',
      },
    });
  });

  it('passes SWE-ReX auth and runtime errors through unchanged', async () => {
    const pin = { 'x-faas-instance-name': sandboxId };
    expect(await get(`${host.gatewayUrl}/is_alive`, { ...pin, 'x-api-key': 'wrong' })).toEqual({
      status: 401,
      body: { detail: 'Invalid API Key' },
    });
    const missing = await post(
      `${host.gatewayUrl}/run_in_session`,
      { command: 'ls', session: 'nope', action_type: 'bash' },
      { ...pin, 'x-api-key': TOKEN },
    );
    expect(missing.status).toBe(511);
    expect(missing.body['swerexception']).toMatchObject({
      class_path: 'swerex.exceptions.SessionDoesNotExistError',
      message: "session 'nope' does not exist",
      extra_info: {},
    });
    const written = await post(
      `${host.gatewayUrl}/write_file`,
      { path: '/a.txt', content: 'x\n' },
      { ...pin, 'x-api-key': TOKEN },
    );
    expect(written).toEqual({ status: 200, body: {} });
    expect(await post(`${host.gatewayUrl}/read_file`, { path: '/a.txt' }, { ...pin, 'x-api-key': TOKEN })).toEqual({
      status: 200,
      body: { content: 'x\n' },
    });
  });

  it('answers 400 without a pin', async () => {
    const missing = await get(`${host.gatewayUrl}/is_alive`, { 'x-api-key': TOKEN });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: { code: 'MissingInstanceName' } });
  });

  it('answers 404 InstanceNotFound for an unknown instance', async () => {
    const unknown = await get(`${host.gatewayUrl}/is_alive`, {
      'x-faas-instance-name': 'sbx-ghost',
      'x-api-key': TOKEN,
    });
    expect(unknown).toEqual({
      status: 404,
      body: { error: { code: 'InstanceNotFound', message: 'instance sbx-ghost not found' } },
    });
  });

  it('answers as for a dead instance after its processes die; Describe shows Failed', async () => {
    const victim = await createSandbox(host);
    const killed = await request(`${host.controlPlaneUrl}/_admin/sandboxes/${victim}/kill-instance`, {
      method: 'POST',
    });
    expect(killed.statusCode).toBe(200);
    await killed.body.dump();
    const dead = await get(`${host.gatewayUrl}/is_alive`, { 'x-faas-instance-name': victim, 'x-api-key': TOKEN });
    expect(dead).toEqual({
      status: 404,
      body: { error: { code: 'InstanceNotFound', message: `instance ${victim} not found` } },
    });
    const described = await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId: victim });
    expect(described).toMatchObject({ Status: 'Failed', ErrorCode: 'function_health_check_failed' });
  });

  it('answers as for a dead instance after KillSandbox', async () => {
    const victim = await createSandbox(host);
    await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId: victim });
    const dead = await get(`${host.gatewayUrl}/is_alive`, { 'x-faas-instance-name': victim, 'x-api-key': TOKEN });
    expect(dead.status).toBe(404);
  });

  it('reports live sandbox counts on /healthz', async () => {
    const health = await get(`${host.controlPlaneUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true, functionId: host.functionId, isolation: 'emulated' });
    const counts = health.body['sandboxes'] as Record<string, number>;
    expect(counts['Ready']).toBeGreaterThanOrEqual(1);
    expect(counts['total']).toBe(host.sandboxCounts().total);
  });
});

describe('gateway key', () => {
  let host: VefaasLocalHandle;
  let sandboxId: string;

  beforeAll(async () => {
    host = await startVefaasLocal({ isolation: 'emulated', gateway: { key: 'gw-secret', prefix: '/route' } });
    sandboxId = await createSandbox(host);
  });
  afterAll(async () => {
    await host.close();
  });

  it('serves the configured prefix', () => {
    expect(host.gatewayUrl).toBe(`${host.controlPlaneUrl}/route`);
  });

  it('answers 401 before the sandbox is reached without the key or with a wrong one', async () => {
    const pin = { 'x-faas-instance-name': sandboxId, 'x-api-key': TOKEN };
    const none = await get(`${host.gatewayUrl}/is_alive`, pin);
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ error: { code: 'Unauthorized' } });
    expect((await get(`${host.gatewayUrl}/is_alive`, { ...pin, authorization: 'nope' })).status).toBe(401);
    // The key is checked before the pin: even an unknown instance gets 401, not 404.
    expect((await get(`${host.gatewayUrl}/is_alive`, { 'x-faas-instance-name': 'sbx-ghost' })).status).toBe(401);
  });

  it('accepts the key as Authorization, Bearer, or query parameter', async () => {
    const pin = { 'x-faas-instance-name': sandboxId, 'x-api-key': TOKEN };
    expect((await get(`${host.gatewayUrl}/is_alive`, { ...pin, authorization: 'gw-secret' })).status).toBe(200);
    expect((await get(`${host.gatewayUrl}/is_alive`, { ...pin, authorization: 'Bearer gw-secret' })).status).toBe(200);
    expect((await get(`${host.gatewayUrl}/is_alive?Authorization=gw-secret`, pin)).status).toBe(200);
  });

  it('keeps the control plane on POST /?Action= of the same port', async () => {
    const { status } = await callAction(host, 'ListSandboxes', { FunctionId: host.functionId });
    expect(status).toBe(200);
  });
});
