/**
 * Remote sessions end to end: real sandboxes (vefaas-local, bubblewrap) from the fleet's sandbox supply, over
 * the API. Lifecycle (create with tools installed, commands and tool calls with persistent state, files,
 * timeouts and malformed calls as observations, delete), idle expiry (while a long call is not cut off), the
 * fleet cap (a second session waits, then 503; fits once the first is gone), a killed sandbox answering a typed
 * error, and reaping after a client disappears (mid-create, and an API process SIGKILLed with live sessions).
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { spawnApi, startTestApi, type TestApi } from './support/api-harness.js';
import type { Config } from '@rollout-fleet/shared';
import {
  cloudEnvFor,
  configOf,
  fleetSandboxes,
  leasesOf,
  startHost,
  stopChild,
  testEnv,
  type Host,
} from './support/pipeline-harness.js';

interface SessionBody {
  id: string;
  sandbox_id: string;
  env: Record<string, string>;
  idle_timeout_s: number;
}

describeWith([bwrapNeed()], 'API sessions', () => {
  let host: Host;
  const apis: TestApi[] = [];

  beforeAll(async () => {
    host = await startHost();
  });
  afterAll(async () => {
    await Promise.all(apis.map((t) => t.close()));
    await host?.close();
  });

  /** Sandboxes of a test's fleet that are starting or running (a killed one is Terminating, then gone). */
  async function alive(config: Config): Promise<string[]> {
    return (await fleetSandboxes(host, config))
      .filter((s) => s.status === 'Starting' || s.status === 'Ready')
      .map((s) => s.id);
  }

  async function api(env: Record<string, string> = {}, o: { reaper?: boolean } = {}): Promise<TestApi> {
    const t = await startTestApi({ env: { RF_SANDBOX_IMAGE: 'pyutils', ...env }, host, ...o });
    apis.push(t);
    return t;
  }

  async function create(t: TestApi, body: Record<string, unknown> = {}): Promise<SessionBody> {
    const res = await t.call('/v1/sessions', { method: 'POST', json: body });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as SessionBody;
  }

  const run = async (t: TestApi, id: string, body: Record<string, unknown>) => {
    const res = await t.call(`/v1/sessions/${id}/run`, { method: 'POST', json: body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('creates a leased sandbox with the tools, runs commands and tool calls in one session, reads and writes files, and deletes it', async () => {
    const t = await api();
    const session = await create(t, { env: { SECRET_SETTING: 'value-7d1f0c' }, tools: [] });
    expect(session.env).toEqual({ SECRET_SETTING: '[REDACTED]' });
    expect(JSON.stringify(session)).not.toContain('value-7d1f0c');
    const [lease] = await leasesOf(t.pipeline);
    expect(lease).toMatchObject({ role: 'session', job: session.id, sandbox: session.sandbox_id });

    // The seed's verification flow, step by step: start, install tools, communicate.
    expect((await run(t, session.id, { command: 'which str_replace_editor' })).body).toMatchObject({ exit_code: 1 });
    const installed = await t.call(`/v1/sessions/${session.id}/tools`, {
      method: 'POST',
      json: { tools: ['execute_bash', 'str_replace_editor'] },
    });
    expect(await installed.json()).toMatchObject({ tools: ['execute_bash', 'str_replace_editor'] });
    expect((await run(t, session.id, { command: 'which str_replace_editor' })).body).toMatchObject({
      exit_code: 0,
      output: expect.stringMatching(/\/str_replace_editor\n$/),
    });
    expect((await run(t, session.id, { command: 'cd /tmp && export GREETING=hi' })).body).toMatchObject({
      exit_code: 0,
    });
    const created = await run(t, session.id, {
      tool_call: {
        name: 'str_replace_editor',
        arguments: { command: 'create', path: '/tmp/demo.py', file_text: 'print(sum([1, 2, 3]))\n' },
      },
    });
    expect(created.body).toMatchObject({
      exit_code: 0,
      output: expect.stringContaining('File created successfully at: /tmp/demo.py'),
    });
    const bash = await run(t, session.id, {
      tool_call: { name: 'execute_bash', arguments: '{"command": "python3 /tmp/demo.py > /tmp/demo_out.txt"}' },
    });
    expect(bash.body).toMatchObject({ exit_code: 0, command: 'python3 /tmp/demo.py > /tmp/demo_out.txt' });
    expect(
      (await run(t, session.id, { command: 'cat /tmp/demo_out.txt; pwd; echo $GREETING $SECRET_SETTING' })).body.output,
    ).toBe('6\n/tmp\nhi value-7d1f0c\n');

    // Model-side trouble is an observation, and the session stays usable.
    const slow = await run(t, session.id, { command: 'sleep 30', timeout_s: 1 });
    expect(slow.body).toMatchObject({ timed_out: true, exit_code: null, error: { code: 'STEP_TIMEOUT' } });
    const unknown = await run(t, session.id, { tool_call: { name: 'rm_everything', arguments: {} } });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({
      exit_code: null,
      error: { code: 'TOOL_ERROR' },
      output: expect.stringContaining("'rm_everything' not found"),
    });
    const syntax = await run(t, session.id, { command: 'echo "unterminated' });
    expect(syntax.body).toMatchObject({ error: { code: 'SWEREX_BASH_SYNTAX' } });
    expect((await run(t, session.id, { command: 'echo still here' })).body.output).toBe('still here\n');
    const both = await t.call(`/v1/sessions/${session.id}/run`, {
      method: 'POST',
      json: { command: 'ls', tool_call: { name: 'execute_bash', arguments: {} } },
    });
    expect(both.status).toBe(422);

    const write = await t.call(`/v1/sessions/${session.id}/files`, {
      method: 'PUT',
      json: { path: '/tmp/a/b/notes.txt', content: 'ünïcode ✓\nline 2\n' },
    });
    expect(write.status).toBe(204);
    const read = await t.call(`/v1/sessions/${session.id}/files?path=/tmp/a/b/notes.txt`);
    expect(await read.json()).toEqual({ path: '/tmp/a/b/notes.txt', content: 'ünïcode ✓\nline 2\n' });
    expect((await t.call(`/v1/sessions/${session.id}`)).status).toBe(200);
    expect(
      ((await (await t.call('/v1/sessions')).json()) as { sessions: SessionBody[] }).sessions.map((s) => s.id),
    ).toEqual([session.id]);

    expect((await t.call(`/v1/sessions/${session.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(await alive(t.config)).toEqual([]);
    expect(await leasesOf(t.pipeline)).toEqual([]);
    const after = await run(t, session.id, { command: 'ls' });
    expect(after.status).toBe(410);
    expect(after.body).toMatchObject({
      error: { code: 'SESSION_CLOSED', message: expect.stringContaining('(deleted)') },
    });
    expect((await t.call('/v1/sessions/ses_unknown')).status).toBe(404);
  });

  it('expires an idle session (its sandbox killed, lease gone) but never cuts off a call that outlasts the idle timeout', async () => {
    const t = await api({ RF_SESSION_IDLE_S: '5' });
    const session = await create(t);
    expect(session.idle_timeout_s).toBe(5);
    const long = await run(t, session.id, { command: 'sleep 7 && echo done', timeout_s: 30 });
    expect(long.body).toMatchObject({ exit_code: 0, output: 'done\n' });
    await vi.waitFor(
      async () => {
        const res = await t.call(`/v1/sessions/${session.id}`);
        expect(res.status).toBe(410);
        expect(await res.json()).toMatchObject({
          error: { code: 'SESSION_CLOSED', message: expect.stringContaining('(idle)') },
        });
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(await alive(t.config)).toEqual([]);
    expect(await leasesOf(t.pipeline)).toEqual([]);
  });

  it('respects the fleet cap: a second session waits and gets 503 after wait_s; it fits once the first is deleted', async () => {
    const t = await api({ RF_FLEET_MAX_SANDBOXES: '1' });
    const first = await create(t);
    const refused = await t.call('/v1/sessions', { method: 'POST', json: { wait_s: 1 } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ error: { code: 'SANDBOX_ACQUIRE_TIMEOUT', retryable: true } });
    expect((await leasesOf(t.pipeline)).map((l) => l.sandbox)).toEqual([first.sandbox_id]);

    // A waiting create gets the slot as soon as the first session gives it back.
    const waiting = t.call('/v1/sessions', { method: 'POST', json: { wait_s: 60 } });
    await vi.waitFor(async () => expect(await t.pipeline.redis.zcard(t.pipeline.keys.slotWaiters())).toBe(1), {
      timeout: 10_000,
      interval: 50,
    });
    expect((await t.call(`/v1/sessions/${first.id}`, { method: 'DELETE' })).status).toBe(204);
    const second = (await (await waiting).json()) as SessionBody;
    expect(second.sandbox_id).not.toBe(first.sandbox_id);
    expect((await leasesOf(t.pipeline)).map((l) => l.sandbox)).toEqual([second.sandbox_id]);
    expect((await t.call(`/v1/sessions/${second.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('answers SANDBOX_DEAD when the sandbox was killed under the session, then SESSION_CLOSED', async () => {
    const t = await api();
    const session = await create(t);
    await host.target.vefaas.killSandbox({ FunctionId: host.target.functionId, SandboxId: session.sandbox_id });
    const dead = await run(t, session.id, { command: 'echo hi' });
    expect(dead.status).toBe(410);
    expect(dead.body).toMatchObject({ error: { code: 'SANDBOX_DEAD', class: 'infra' } });
    const closed = await run(t, session.id, { command: 'echo hi' });
    expect(closed.body).toMatchObject({
      error: { code: 'SESSION_CLOSED', message: expect.stringContaining('(sandbox-lost)') },
    });
    expect(await leasesOf(t.pipeline)).toEqual([]);
  });

  it('leaves nothing behind when the client goes away mid-create, or when the API process dies with live sessions', async () => {
    const env = {
      ...testEnv({ RF_SANDBOX_IMAGE: 'pyutils', RF_LEASE_TTL_S: '3', RF_REAPER_INTERVAL_S: '1', LOG_LEVEL: 'warn' }),
      ...cloudEnvFor(host.handle),
    };
    const config = configOf(env);
    const child = await spawnApi(env);
    try {
      // A client that gives up while the sandbox starts: the acquisition is cancelled, the sandbox killed.
      const controller = new AbortController();
      const abandoned = fetch(`${child.url}/v1/sessions`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
        signal: controller.signal,
      });
      await vi.waitFor(async () => expect(await alive(config)).toHaveLength(1), { timeout: 10_000, interval: 20 });
      controller.abort();
      await expect(abandoned).rejects.toThrow();
      await vi.waitFor(async () => expect(await alive(config)).toEqual([]), { timeout: 10_000, interval: 50 });

      // Sessions of an API process that dies: their leases lapse and another process's reaper kills them.
      const opened = await Promise.all(
        [0, 1].map(
          async () =>
            (await (
              await fetch(`${child.url}/v1/sessions`, {
                method: 'POST',
                body: '{}',
                headers: { 'content-type': 'application/json' },
              })
            ).json()) as SessionBody,
        ),
      );
      expect((await alive(config)).sort()).toEqual(opened.map((s) => s.sandbox_id).sort());
      await stopChild(child.child, 'SIGKILL');
    } finally {
      await stopChild(child.child, 'SIGKILL');
    }
    // Another API process of the same fleet (same Redis prefix) takes its turn at reaping.
    const survivor = await startTestApi({ env, host, reaper: true });
    apis.push(survivor);
    await vi.waitFor(
      async () => {
        expect(await alive(config)).toEqual([]);
        expect(await leasesOf(survivor.pipeline)).toEqual([]);
      },
      { timeout: 30_000, interval: 250 },
    );
  });
});
