import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { ErrorCode } from '@rollout-fleet/shared';
import { RolloutError } from '@rollout-fleet/shared';
import { VefaasClient, type VefaasClientOptions } from './control-plane-client.js';
import type { SandboxListItem } from './control-plane-types.js';
import { createVefaasClient, type CreateVefaasClientOptions } from './create-vefaas-client.js';
import { verifySignature, type VerifySignatureResult } from './verify-signature.js';

const CREDS = { accessKeyId: 'AKLTwireTest', secretAccessKey: 'wire-secret-never-logged' };

interface Received {
  method: string;
  path: string;
  rawQuery: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  json: unknown;
  signature: VerifySignatureResult;
}

type Responder = (req: Received, res: ServerResponse) => void;

/** A wire-level stand-in for the control plane: records and verifies each request, answers via `respond`. */
async function startServer(respond: Responder) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const [path = '', rawQuery = ''] = (req.url ?? '').split('?', 2);
      const base = { method: req.method ?? '', path, rawQuery, headers: req.headers, body };
      const signature = verifySignature(
        { ...base, service: 'vefaas' },
        { lookupSecret: (ak) => (ak === CREDS.accessKeyId ? CREDS.secretAccessKey : undefined) },
      );
      const entry = {
        ...base,
        json: body.length ? (JSON.parse(body.toString('utf8')) as unknown) : undefined,
        signature,
      };
      received.push(entry);
      respond(entry, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

let requestSeq = 0;
function reply(
  res: ServerResponse,
  status: number,
  action: string,
  payload: { Result?: unknown; Error?: { Code: string; Message: string; CodeN?: number } },
) {
  const RequestId = `20260722041907${String(++requestSeq).padStart(4, '0')}ABCDEF`;
  const meta = { RequestId, Action: action, Version: '2024-06-06', Service: 'vefaas', Region: 'cn-beijing' };
  const body = payload.Error
    ? { ResponseMetadata: { ...meta, Error: payload.Error } }
    : { ResponseMetadata: meta, Result: payload.Result };
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function actionOf(req: Received): string {
  return new URLSearchParams(req.rawQuery).get('Action') ?? '';
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup(respond: Responder, options: Partial<CreateVefaasClientOptions> = {}) {
  const server = await startServer(respond);
  cleanups.push(server.close);
  const client = createVefaasClient({
    endpoint: server.url,
    region: 'cn-beijing',
    credentials: CREDS,
    retry: { sleep: async () => {}, random: () => 0 },
    ...options,
  });
  cleanups.push(() => client.close());
  return { server, client };
}

async function rejection(promise: Promise<unknown>): Promise<RolloutError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RolloutError);
  return err as RolloutError;
}

describe('VefaasClient wire format', () => {
  it('sends a signed POST with the exact query, JSON content type and PascalCase body', async () => {
    const { server, client } = await setup((req, res) =>
      reply(res, 200, actionOf(req), { Result: { SandboxId: 'sb-1', AssignStatus: 'Assigned' } }),
    );
    const request = {
      FunctionId: 'fn-1',
      Timeout: 60,
      InstanceImageInfo: { Image: 'img:1', Port: 8000, Command: 'python3 -m swerex.server --auth-token t' },
      Metadata: { job: 'j-1' },
    };
    await expect(client.createSandbox(request)).resolves.toEqual({ SandboxId: 'sb-1', AssignStatus: 'Assigned' });

    expect(server.received).toHaveLength(1);
    const [req] = server.received as [Received];
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/');
    expect(req.rawQuery).toBe('Action=CreateSandbox&Version=2024-06-06');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.signature).toEqual({ ok: true, accessKeyId: CREDS.accessKeyId, region: 'cn-beijing' });
    expect(req.headers['authorization']).toMatch(/SignedHeaders=content-type;host;x-content-sha256;x-date,/);
    expect(req.json).toEqual(request);
    expect(req.body.toString()).toBe(JSON.stringify(request));
  });

  it('signs with X-Security-Token for STS credentials', async () => {
    const { server, client } = await setup((req, res) => reply(res, 200, actionOf(req), { Result: {} }), {
      credentials: { ...CREDS, sessionToken: 'sts-token' },
    });
    await expect(client.killSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' })).resolves.toEqual({});
    expect(server.received[0]?.headers['x-security-token']).toBe('sts-token');
    expect(server.received[0]?.signature.ok).toBe(true);
  });

  it('calls Describe, Kill and SetSandboxTimeout with their actions and bodies', async () => {
    const results: Record<string, unknown> = {
      DescribeSandbox: {
        Id: 'sb-1',
        FunctionId: 'fn-1',
        Status: 'Ready',
        MetadataList: [{ MetaKey: 'job', MetaValue: 'j' }],
      },
      KillSandbox: {},
      SetSandboxTimeout: { ExpireAt: '2026-07-22T05:00:00Z', FunctionId: 'fn-1', SandboxId: 'sb-1' },
    };
    const { server, client } = await setup((req, res) =>
      reply(res, 200, actionOf(req), { Result: results[actionOf(req)] }),
    );

    const described = await client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' });
    expect(described.Status).toBe('Ready');
    expect(described.MetadataList).toEqual([{ MetaKey: 'job', MetaValue: 'j' }]);
    await expect(client.killSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' })).resolves.toEqual({});
    const extended = await client.setSandboxTimeout({
      FunctionId: 'fn-1',
      SandboxId: 'sb-1',
      Timeout: 1800,
      TimeoutUnit: 'second',
    });
    expect(extended.ExpireAt).toBe('2026-07-22T05:00:00Z');

    expect(server.received.map((r) => [r.rawQuery, r.json, r.signature.ok])).toEqual([
      ['Action=DescribeSandbox&Version=2024-06-06', { FunctionId: 'fn-1', SandboxId: 'sb-1' }, true],
      ['Action=KillSandbox&Version=2024-06-06', { FunctionId: 'fn-1', SandboxId: 'sb-1' }, true],
      [
        'Action=SetSandboxTimeout&Version=2024-06-06',
        { FunctionId: 'fn-1', SandboxId: 'sb-1', Timeout: 1800, TimeoutUnit: 'second' },
        true,
      ],
    ]);
  });

  it('walks every ListSandboxes page with the metadata filter and filters status locally', async () => {
    const all: SandboxListItem[] = ['Ready', 'Starting', 'Ready', 'Failed', 'Ready'].map((Status, i) => ({
      Id: `sb-${i}`,
      FunctionId: 'fn-1',
      Status,
      Metadata: { job: 'j-1' },
    }));
    const { server, client } = await setup((req, res) => {
      const body = req.json as { PageNumber: number; PageSize: number };
      const start = (body.PageNumber - 1) * body.PageSize;
      reply(res, 200, 'ListSandboxes', {
        Result: { Sandboxes: all.slice(start, start + body.PageSize), Total: all.length, StatusCount: {} },
      });
    });

    const items = await client.listAllSandboxes({ FunctionId: 'fn-1', Metadata: { job: 'j-1' }, PageSize: 2 });
    expect(items.map((s) => s.Id)).toEqual(['sb-0', 'sb-1', 'sb-2', 'sb-3', 'sb-4']);
    expect(server.received.map((r) => r.json)).toEqual(
      [1, 2, 3].map((PageNumber) => ({ FunctionId: 'fn-1', Metadata: { job: 'j-1' }, PageSize: 2, PageNumber })),
    );

    const ready = await client.listAllSandboxes({ FunctionId: 'fn-1', PageSize: 100 }, { statuses: ['Ready'] });
    expect(ready.map((s) => s.Id)).toEqual(['sb-0', 'sb-2', 'sb-4']);
    expect(server.received).toHaveLength(4);
  });
});

describe('VefaasClient error mapping', () => {
  const cases: Array<[status: number, apiCode: string, message: string, expected: ErrorCode]> = [
    [404, 'ResourceNotFound', 'Sandbox not found', 'VEFAAS_NOT_FOUND'],
    [429, 'AccountFlowLimitExceeded', 'too many requests', 'VEFAAS_THROTTLED'],
    [400, 'FlowLimitExceeded', 'flow limit', 'VEFAAS_THROTTLED'],
    [401, 'SignatureDoesNotMatch', 'bad signature', 'VEFAAS_AUTH'],
    [401, 'InvalidAccessKey', 'unknown ak', 'VEFAAS_AUTH'],
    [401, 'MissingAuthenticationToken', 'no auth', 'VEFAAS_AUTH'],
    [401, 'MissingSignature', 'no signature', 'VEFAAS_AUTH'],
    [403, 'InvalidTimestamp', 'skew', 'VEFAAS_AUTH'],
    [403, 'AccessDenied', 'denied', 'VEFAAS_AUTH'],
    [400, 'InvalidAuthorization', 'bad header', 'VEFAAS_AUTH'],
    [400, 'InvalidCredential', 'bad credential', 'VEFAAS_AUTH'],
    [400, 'InvalidParameter', 'Status is not supported', 'VEFAAS_BAD_REQUEST'],
    [400, 'MissingParameter', 'FunctionId', 'VEFAAS_BAD_REQUEST'],
    [400, 'BadRequest', 'Command is empty', 'VEFAAS_BAD_REQUEST'],
    [404, 'InvalidActionOrVersion', 'no such action', 'VEFAAS_BAD_REQUEST'],
    [500, 'InternalError', 'oops', 'VEFAAS_SERVER_ERROR'],
    [503, 'ServiceUnavailable', 'later', 'VEFAAS_SERVER_ERROR'],
    [500, 'UserTimeoutError', 'function_cold_start_timeout', 'VEFAAS_SERVER_ERROR'],
    [409, 'Conflict', 'something else', 'VEFAAS_API_ERROR'],
  ];

  it('maps each control-plane error to its RolloutError code with safe details', async () => {
    let next = 0;
    const { server, client } = await setup(
      (req, res) => {
        const [status, Code, Message] = cases[next++] as (typeof cases)[number];
        reply(res, status, actionOf(req), { Error: { Code, Message } });
      },
      { retry: false },
    );
    const seen: Array<[string, ErrorCode]> = [];
    for (const [status, apiCode] of cases) {
      const err = await rejection(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-x' }));
      seen.push([apiCode, err.code]);
      expect(err.details).toEqual({
        action: 'DescribeSandbox',
        httpStatus: status,
        apiCode,
        requestId: expect.stringMatching(/^2026/),
      });
      expect(JSON.stringify(err)).not.toContain(CREDS.secretAccessKey);
      expect(err.message).toContain(apiCode);
    }
    expect(seen).toEqual(cases.map(([, apiCode, , expected]) => [apiCode, expected]));
    expect(server.received).toHaveLength(cases.length);
  });

  it('treats an Error envelope on HTTP 200 as a failure', async () => {
    const { client } = await setup((req, res) =>
      reply(res, 200, actionOf(req), { Error: { Code: 'ResourceNotFound', Message: 'Sandbox not found' } }),
    );
    const err = await rejection(client.killSandbox({ FunctionId: 'fn-1', SandboxId: 'gone' }));
    expect(err.code).toBe('VEFAAS_NOT_FOUND');
    expect(err.details['httpStatus']).toBe(200);
  });

  it('maps a non-JSON 502 to VEFAAS_SERVER_ERROR and a Result-less 200 to VEFAAS_API_ERROR', async () => {
    const { client } = await setup(
      (req, res) => {
        if (actionOf(req) === 'DescribeSandbox')
          res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
        else reply(res, 200, actionOf(req), {});
      },
      { retry: false },
    );
    const gateway = await rejection(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }));
    expect(gateway.code).toBe('VEFAAS_SERVER_ERROR');
    expect(gateway.message).toContain('HTTP 502');
    const empty = await rejection(client.createSandbox({ FunctionId: 'fn-1' }));
    expect(empty.code).toBe('VEFAAS_API_ERROR');
  });
});

describe('VefaasClient retries and transport failures', () => {
  it('retries a 429 and succeeds, signing each attempt', async () => {
    let calls = 0;
    const retries: number[] = [];
    const { server, client } = await setup(
      (req, res) => {
        if (++calls === 1)
          reply(res, 429, actionOf(req), { Error: { Code: 'AccountFlowLimitExceeded', Message: 'slow down' } });
        else reply(res, 200, actionOf(req), { Result: { SandboxId: 'sb-2', AssignStatus: 'Assigned' } });
      },
      { retry: { sleep: async () => {}, random: () => 0, onRetry: (e) => retries.push(e.retry) } },
    );
    await expect(client.createSandbox({ FunctionId: 'fn-1' })).resolves.toMatchObject({ SandboxId: 'sb-2' });
    expect(retries).toEqual([1]);
    expect(server.received.map((r) => r.signature.ok)).toEqual([true, true]);
  });

  it('gives up on a persistent 500 after the configured retries', async () => {
    const { server, client } = await setup(
      (req, res) => reply(res, 500, actionOf(req), { Error: { Code: 'InternalError', Message: 'boom' } }),
      {
        retry: { retries: 2, sleep: async () => {} },
      },
    );
    const err = await rejection(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }));
    expect(err.code).toBe('VEFAAS_SERVER_ERROR');
    expect(server.received).toHaveLength(3);
  });

  it('sends a `once` call exactly once, even when its failure is retryable', async () => {
    const { server, client } = await setup(
      (req, res) => reply(res, 500, actionOf(req), { Error: { Code: 'InternalError', Message: 'boom' } }),
      {
        retry: { retries: 3, sleep: async () => {} },
      },
    );
    const err = await rejection(client.createSandbox({ FunctionId: 'fn-1' }, { once: true }));
    expect(err.code).toBe('VEFAAS_SERVER_ERROR');
    expect(server.received).toHaveLength(1);
  });

  it('does not retry non-retryable errors', async () => {
    const { server, client } = await setup((req, res) =>
      reply(res, 401, actionOf(req), { Error: { Code: 'SignatureDoesNotMatch', Message: 'no' } }),
    );
    expect((await rejection(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }))).code).toBe(
      'VEFAAS_AUTH',
    );
    expect(server.received).toHaveLength(1);
  });

  it('turns a hung request into VEFAAS_TIMEOUT', async () => {
    const { server, client } = await setup(() => {}, { retry: false, timeoutMs: 200 });
    const err = await rejection(client.createSandbox({ FunctionId: 'fn-1' }));
    expect(err.code).toBe('VEFAAS_TIMEOUT');
    expect(err.details).toMatchObject({ action: 'CreateSandbox', timeoutMs: 200 });
    expect(server.received).toHaveLength(1);
  });

  it('retries a request that timed out (VEFAAS_TIMEOUT is retryable): the next attempt answers', async () => {
    let calls = 0;
    const { server, client } = await setup(
      (req, res) => {
        calls += 1;
        // The first request hangs past the client's timeout; the retry is answered.
        if (calls > 1) reply(res, 200, actionOf(req), { Result: { SandboxId: 'sb-after-timeout' } });
      },
      { timeoutMs: 200 },
    );
    const created = await client.createSandbox({ FunctionId: 'fn-1' });
    expect(created.SandboxId).toBe('sb-after-timeout');
    expect(server.received).toHaveLength(2);
  });

  it('honours a per-call timeout override', async () => {
    const { client } = await setup(() => {}, { retry: false, timeoutMs: 60_000 });
    const err = await rejection(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }, { timeoutMs: 100 }));
    expect(err.code).toBe('VEFAAS_TIMEOUT');
  });

  it('turns a closed socket into VEFAAS_NETWORK and retries it', async () => {
    let calls = 0;
    const { server, client } = await setup((req, res) => {
      if (++calls === 1) res.socket?.destroy();
      else reply(res, 200, actionOf(req), { Result: { Id: 'sb-1', FunctionId: 'fn-1', Status: 'Ready' } });
    });
    await expect(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' })).resolves.toMatchObject({
      Status: 'Ready',
    });
    expect(server.received).toHaveLength(2);

    const once = new VefaasClient({ endpoint: server.url, region: 'cn-beijing', credentials: CREDS });
    cleanups.push(() => once.close());
    calls = 0;
    const err = await rejection(once.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }));
    expect(err.code).toBe('VEFAAS_NETWORK');
  });

  it('reports a refused connection as VEFAAS_NETWORK', async () => {
    const server = await startServer(() => {});
    await server.close();
    const client = new VefaasClient({ endpoint: server.url, region: 'cn-beijing', credentials: CREDS });
    cleanups.push(() => client.close());
    const err = await rejection(client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }));
    expect(err.code).toBe('VEFAAS_NETWORK');
    expect(err.details['errno']).toBe('ECONNREFUSED');
  });

  it('rethrows a caller abort as is, without retrying', async () => {
    const controller = new AbortController();
    const { server, client } = await setup(() => controller.abort(new Error('worker shutdown')));
    await expect(
      client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }, { signal: controller.signal }),
    ).rejects.toThrow('worker shutdown');
    expect(server.received).toHaveLength(1);
  });

  it("leaves no listener on the caller's signal once a call ends, answered or failed", async () => {
    // A long-lived signal (the worker's shutdown) is passed to every call: each call's link to it must go.
    const shutdown = new AbortController();
    let calls = 0;
    const { client } = await setup(
      (req, res) => {
        calls += 1;
        if (calls === 1) reply(res, 200, actionOf(req), { Result: { SandboxId: 'sb-1' } });
        else res.destroy();
      },
      { retry: false },
    );
    await client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }, { signal: shutdown.signal });
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    const err = await rejection(
      client.describeSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' }, { signal: shutdown.signal }),
    );
    expect(err.code).toBe('VEFAAS_NETWORK');
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });

  it('uses an injected dispatcher and leaves it open on close()', async () => {
    const server = await startServer((req, res) => reply(res, 200, actionOf(req), { Result: {} }));
    cleanups.push(server.close);
    const agent = new Agent();
    cleanups.push(() => agent.close());
    const options: VefaasClientOptions = {
      endpoint: server.url,
      region: 'cn-beijing',
      credentials: CREDS,
      dispatcher: agent,
    };
    const client = new VefaasClient(options);
    await client.killSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-1' });
    await client.close();
    expect(agent.closed).toBe(false);
    await expect(new VefaasClient(options).killSandbox({ FunctionId: 'fn-1', SandboxId: 'sb-2' })).resolves.toEqual({});
    expect(server.received).toHaveLength(2);
  });
});
