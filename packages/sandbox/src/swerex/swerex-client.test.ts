import { getEventListeners } from 'node:events';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { RolloutError } from '@rollout-fleet/shared';
import { POOLS_PER_ORIGIN, closeSharedDispatchers, dispatcherFor } from './dispatcher-registry.js';
import { SwerexClient, type SwerexClientOptions, type SwerexLogger } from './swerex-client.js';
import {
  jsonOf,
  sendJson,
  startWireServer,
  type RecordedRequest,
  type WireHandler,
  type WireServer,
} from '@rollout-fleet/test-kit/wire-test-server';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Answers every endpoint like a healthy SWE-ReX server. */
const happy: WireHandler = (req, res) => {
  const path = req.url.pathname.replace(/^\/route/, '');
  const bodies: Record<string, unknown> = {
    '/is_alive': { is_alive: true, message: '' },
    '/create_session': { output: '', session_type: 'bash' },
    '/run_in_session': {
      output: 'hi\n',
      exit_code: 0,
      failure_reason: '',
      expect_string: 'SHELLPS1PREFIX',
      session_type: 'bash',
    },
    '/close_session': { session_type: 'bash' },
    '/execute': { stdout: 'out\n', stderr: '', exit_code: 0 },
    '/read_file': { content: 'text' },
    '/write_file': {},
    '/close': {},
  };
  const body = bodies[path];
  if (body === undefined) sendJson(res, 404, { detail: 'Not Found' });
  else sendJson(res, 200, body);
};

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(closeSharedDispatchers);

async function serve(handler: WireHandler): Promise<WireServer> {
  server = await startWireServer(handler);
  return server;
}

function clientFor(srv: WireServer, options: Partial<SwerexClientOptions> = {}): SwerexClient {
  return new SwerexClient({
    baseUrl: `${srv.url}/route`,
    instanceName: 'sb-123',
    apiKey: 'swerex-secret',
    backoff: { minDelayMs: 1, maxDelayMs: 5 },
    ...options,
  });
}

async function rejectionOf(promise: Promise<unknown>): Promise<RolloutError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof RolloutError)) throw new Error(`expected a RolloutError, got ${String(err)}`);
  return err;
}

describe('SwerexClient wire format', () => {
  it('pins the instance both ways, authenticates, and sends every field with discriminators', async () => {
    const srv = await serve(happy);
    const client = clientFor(srv, { gatewayKey: 'gw-secret' });

    expect(await client.createSession()).toEqual({ output: '', session_type: 'bash' });
    expect((await client.runInSession({ command: 'echo hi' })).output).toBe('hi\n');
    await client.interrupt('s1');
    await client.closeSession();
    expect(await client.execute({ command: 'ls', shell: true })).toEqual({ stdout: 'out\n', stderr: '', exit_code: 0 });
    expect(await client.readFile({ path: '/x' })).toEqual({ content: 'text' });
    await client.writeFile({ path: '/y', content: 'c' });
    await client.close();

    const byPath = (p: string): RecordedRequest[] => srv.requests.filter((r) => r.url.pathname === `/route/${p}`);
    expect(jsonOf(byPath('create_session')[0]!)).toEqual({
      startup_source: [],
      session: 'default',
      session_type: 'bash',
      startup_timeout: 1,
    });
    const [run, interrupt] = byPath('run_in_session');
    expect(jsonOf(run!)).toEqual({
      command: 'echo hi',
      session: 'default',
      timeout: null,
      is_interactive_command: false,
      is_interactive_quit: false,
      check: 'raise',
      error_msg: '',
      expect: [],
      action_type: 'bash',
    });
    expect(jsonOf(interrupt!)).toEqual({
      session: 's1',
      timeout: 0.2,
      n_retry: 3,
      expect: [],
      action_type: 'bash_interrupt',
    });
    expect(jsonOf(byPath('close_session')[0]!)).toEqual({ session: 'default', session_type: 'bash' });
    expect(jsonOf(byPath('execute')[0]!)).toEqual({
      command: 'ls',
      timeout: null,
      shell: true,
      check: false,
      error_msg: '',
      env: null,
      cwd: null,
      merge_output_streams: false,
    });
    expect(jsonOf(byPath('read_file')[0]!)).toEqual({ path: '/x', encoding: null, errors: null });
    expect(jsonOf(byPath('write_file')[0]!)).toEqual({ content: 'c', path: '/y' });

    expect(srv.requests).toHaveLength(8);
    for (const req of srv.requests) {
      expect(req.method).toBe('POST');
      expect(req.url.searchParams.get('faasInstanceName')).toBe('sb-123');
      expect(req.headers['x-faas-instance-name']).toBe('sb-123');
      expect(req.headers['x-api-key']).toBe('swerex-secret');
      expect(req.headers['authorization']).toBe('gw-secret');
      expect(req.headers['x-request-id']).toMatch(UUID);
    }
    expect(new Set(srv.requests.map((r) => r.headers['x-request-id'])).size).toBe(8);
  });

  it('sends no X-API-Key for an empty key, no pin without an instance, and keeps query parameters of the route', async () => {
    const srv = await serve(happy);
    const client = new SwerexClient({ baseUrl: `${srv.url}/route/?route=a`, apiKey: '' });
    await client.readFile({ path: '/x' });
    const [req] = srv.requests;
    expect(req!.headers['x-api-key']).toBeUndefined();
    expect(req!.headers['x-faas-instance-name']).toBeUndefined();
    expect(req!.headers['authorization']).toBeUndefined();
    expect(req!.url.pathname).toBe('/route/read_file');
    expect([...req!.url.searchParams]).toEqual([['route', 'a']]);
  });

  it('rejects an invalid request before sending it', async () => {
    const srv = await serve(happy);
    const err = await rejectionOf(clientFor(srv).runInSession({ command: 'x', timeout: -1 }));
    expect(err.code).toBe('INPUT_INVALID');
    expect(srv.requests).toHaveLength(0);
  });
});

describe('SwerexClient retries', () => {
  it('reuses the X-Request-ID when it retries after a gateway 503', async () => {
    const srv = await serve((req, res) =>
      req.index === 0 ? sendJson(res, 503, { message: 'no healthy upstream' }) : happy(req, res),
    );
    const warnings: object[] = [];
    const logger: SwerexLogger = { debug: () => undefined, warn: (obj) => warnings.push(obj) };
    const client = clientFor(srv, { logger, gatewayKey: 'gw-secret' });

    const obs = await client.runInSession({ command: 'echo hi', timeout: 5 });

    expect(obs.exit_code).toBe(0);
    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[0]!.headers['x-request-id']).toMatch(UUID);
    expect(srv.requests[1]!.headers['x-request-id']).toBe(srv.requests[0]!.headers['x-request-id']);
    expect(jsonOf(srv.requests[1]!)).toEqual(jsonOf(srv.requests[0]!));
    expect(warnings).toEqual([expect.objectContaining({ code: 'GATEWAY_ERROR', attempt: 1, path: '/run_in_session' })]);
    expect(JSON.stringify(warnings)).not.toMatch(/secret/);
  });

  it('reuses the X-Request-ID when the connection drops before an answer', async () => {
    const srv = await serve((req, res) => {
      if (req.index === 0) res.socket?.destroy();
      else happy(req, res);
    });
    const result = await clientFor(srv).execute({ command: ['true'] });
    expect(result.exit_code).toBe(0);
    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[1]!.headers['x-request-id']).toBe(srv.requests[0]!.headers['x-request-id']);
  });

  it('gives up after the configured number of retries with GATEWAY_ERROR', async () => {
    const srv = await serve((_req, res) => sendJson(res, 502, { message: 'bad gateway' }));
    const err = await rejectionOf(clientFor(srv, { retries: 2 }).readFile({ path: '/x' }));
    expect(err.code).toBe('GATEWAY_ERROR');
    expect(err.retryable).toBe(true);
    expect(srv.requests).toHaveLength(3);
    expect(new Set(srv.requests.map((r) => r.headers['x-request-id'])).size).toBe(1);
  });

  it.each([
    [401, { detail: 'Invalid API Key' }, 'SWEREX_AUTH'],
    [403, { detail: 'Not authenticated' }, 'SWEREX_AUTH'],
    [401, { message: 'key-auth: invalid key' }, 'GATEWAY_AUTH'],
  ] as const)('does not retry HTTP %i %j (%s)', async (status, body, code) => {
    const srv = await serve((_req, res) => sendJson(res, status, body));
    const err = await rejectionOf(clientFor(srv).runInSession({ command: 'ls' }));
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(false);
    expect(err.details).toMatchObject({ status, path: '/run_in_session', instanceName: 'sb-123' });
    expect(srv.requests).toHaveLength(1);
  });

  it('does not retry a 511 runtime error', async () => {
    const srv = await serve((_req, res) =>
      sendJson(res, 511, {
        swerexception: { message: 'boom', class_path: 'builtins.RuntimeError', traceback: 'tb', extra_info: {} },
      }),
    );
    const err = await rejectionOf(clientFor(srv).execute({ command: 'x' }));
    expect(err.code).toBe('SWEREX_RUNTIME');
    expect(srv.requests).toHaveLength(1);
  });
});

describe('SwerexClient HTTP timeouts', () => {
  it('times out at command timeout + margin with SWEREX_TIMEOUT and retries with the same id', async () => {
    const srv = await serve(() => undefined); // never answers
    const client = clientFor(srv, { timeoutMarginMs: 100, retries: 1 });
    const started = Date.now();
    const err = await rejectionOf(client.runInSession({ command: 'sleep 9', timeout: 0.05 }));
    const elapsed = Date.now() - started;
    expect(err.code).toBe('SWEREX_TIMEOUT');
    expect(srv.requests).toHaveLength(2);
    expect(srv.requests[1]!.headers['x-request-id']).toBe(srv.requests[0]!.headers['x-request-id']);
    // Two attempts of 50 ms + 100 ms each (minus timer slack).
    expect(elapsed).toBeGreaterThanOrEqual(2 * 140);
  });

  it('waits past the command timeout while within the margin', async () => {
    const srv = await serve((req, res) => {
      setTimeout(() => happy(req, res), 120); // the server's command takes longer than the command timeout
    });
    const client = clientFor(srv, { timeoutMarginMs: 2000, retries: 0 });
    const obs = await client.runInSession({ command: 'slow', timeout: 0.05 });
    expect(obs.output).toBe('hi\n');
  });

  it('sets no HTTP timeout for timeout:null commands, however small the defaults', async () => {
    const srv = await serve((req, res) => {
      setTimeout(() => happy(req, res), 150);
    });
    const client = clientFor(srv, { timeoutMarginMs: 10, defaultTimeoutMs: 10, retries: 0 });
    expect((await client.runInSession({ command: 'slow' })).exit_code).toBe(0);
    const err = await rejectionOf(client.readFile({ path: '/x' }));
    expect(err.code).toBe('SWEREX_TIMEOUT');
  });

  it('rejects with the abort reason and does not retry when the caller aborts', async () => {
    const srv = await serve(() => undefined);
    const controller = new AbortController();
    const reason = new RolloutError('WORKER_SHUTDOWN', 'stopping');
    const pending = clientFor(srv).runInSession({ command: 'sleep 9' }, { signal: controller.signal });
    await vi.waitFor(() => expect(srv.requests).toHaveLength(1));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(srv.requests).toHaveLength(1);
  });

  it('logs one debug record per exchange when the logger has debug on, none (not even built) when it is off', async () => {
    const srv = await serve(happy);
    const records: object[] = [];
    const loggerAt = (debug: boolean): SwerexLogger => ({
      debug: (obj) => records.push(obj),
      warn: () => undefined,
      isLevelEnabled: (level) => debug || level !== 'debug',
    });
    await clientFor(srv, { logger: loggerAt(false) }).runInSession({ command: 'true' });
    expect(records).toHaveLength(0);
    await clientFor(srv, { logger: loggerAt(true) }).runInSession({ command: 'true' });
    expect(records).toEqual([
      expect.objectContaining({ path: '/run_in_session', instanceName: 'sb-123', status: 200 }),
    ]);
  });

  it("leaves no listener on the caller's signal after a call, answered, failed or timed out", async () => {
    let n = 0;
    const srv = await serve((req, res) => {
      n += 1;
      if (n % 3 === 0) return; // never answered: the call times out
      if (n % 3 === 2) sendJson(res, 500, { detail: 'boom' });
      else happy(req, res);
    });
    const client = clientFor(srv, { timeoutMarginMs: 0, retries: 0 });
    const controller = new AbortController();
    for (let i = 0; i < 6; i++) {
      await client
        .runInSession({ command: 'true', timeout: 0.05 }, { signal: controller.signal })
        .catch(() => undefined);
    }
    expect(n).toBe(6);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('shared dispatchers', () => {
  it('shares a few keep-alive pools per origin across clients, one per sandbox', async () => {
    const srv = await serve(happy);
    const a = clientFor(srv, { instanceName: 'sb-a' });
    const b = clientFor(srv, { instanceName: 'sb-b' });
    // The same sandbox always gets the same pool; an origin has at most POOLS_PER_ORIGIN of them.
    expect(clientFor(srv, { instanceName: 'sb-a' }).dispatcher).toBe(a.dispatcher);
    expect(a.dispatcher).toBe(dispatcherFor(srv.url, { shardKey: 'sb-a' }));
    const many = new Set(
      Array.from({ length: 2000 }, (_, i) => clientFor(srv, { instanceName: `sb-${i}` }).dispatcher),
    );
    expect(many.size).toBe(POOLS_PER_ORIGIN);
    expect(many.has(dispatcherFor(srv.url))).toBe(true);
    expect(new SwerexClient({ baseUrl: 'http://127.0.0.2:1', apiKey: '' }).dispatcher).not.toBe(a.dispatcher);

    for (let i = 0; i < 3; i++) {
      await a.readFile({ path: '/a' });
      await b.readFile({ path: '/b' });
    }
    expect(srv.requests.map((r) => r.headers['x-faas-instance-name'])).toEqual([
      'sb-a',
      'sb-b',
      'sb-a',
      'sb-b',
      'sb-a',
      'sb-b',
    ]);
    // Keep-alive sockets are reused across both clients (undici may open a second one while the first drains).
    expect(new Set(srv.requests.map((r) => r.remotePort)).size).toBeLessThanOrEqual(2);
  });
});
