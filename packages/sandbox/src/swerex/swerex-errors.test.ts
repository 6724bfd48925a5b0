import { createServer } from 'node:net';
import { once } from 'node:events';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RolloutError } from '@rollout-fleet/shared';
import { classifyGatewayResponse } from './classify-gateway-response.js';
import { closeSharedDispatchers } from './dispatcher-registry.js';
import { SwerexClient } from './swerex-client.js';
import { SwerexRuntimeError } from './swerex-runtime-error.js';
import { sendJson, startWireServer, type WireHandler, type WireServer } from '@rollout-fleet/test-kit/wire-test-server';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(closeSharedDispatchers);

async function clientAnswering(handler: WireHandler): Promise<SwerexClient> {
  server = await startWireServer(handler);
  return new SwerexClient({ baseUrl: server.url, instanceName: 'sb-9', apiKey: 'k', backoff: { minDelayMs: 1 } });
}

async function rejectionOf(promise: Promise<unknown>): Promise<RolloutError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof RolloutError)) throw new Error(`expected a RolloutError, got ${String(err)}`);
  return err;
}

describe('511 swerexception mapping', () => {
  it.each([
    [
      'swerex.exceptions.CommandTimeoutError',
      "timeout after 0.5 seconds while running command 'sleep 3'",
      'SWEREX_COMMAND_TIMEOUT',
    ],
    [
      'swerex.exceptions.BashIncorrectSyntaxError',
      "Error (exit code 2) while checking bash command \n'(a'",
      'SWEREX_BASH_SYNTAX',
    ],
    ['swerex.exceptions.NonZeroExitCodeError', 'Command failed with exit code 1', 'SWEREX_NONZERO_EXIT'],
    ['swerex.exceptions.NoExitCodeError', 'no exit code', 'SWEREX_NO_EXIT_CODE'],
    ['swerex.exceptions.SessionDoesNotExistError', "session 'nope' does not exist", 'SWEREX_SESSION_MISSING'],
    ['swerex.exceptions.SessionExistsError', 'session default already exists', 'SWEREX_SESSION_EXISTS'],
    ['pexpect.exceptions.TIMEOUT', 'Failed to interrupt session', 'SWEREX_INTERRUPT_FAILED'],
    ['builtins.FileNotFoundError', "[Errno 2] No such file or directory: '/x'", 'SWEREX_RUNTIME'],
    ['swerex.exceptions.SomethingNew', 'new', 'SWEREX_RUNTIME'],
  ] as const)('%s → %s', async (classPath, message, code) => {
    const extraInfo = { bash_stdout: 'o', bash_stderr: 'e' };
    const client = await clientAnswering((_req, res) =>
      sendJson(res, 511, {
        swerexception: { message, class_path: classPath, traceback: 'Traceback ...', extra_info: extraInfo },
      }),
    );
    const err = await rejectionOf(client.runInSession({ command: 'x' }));
    expect(err).toBeInstanceOf(SwerexRuntimeError);
    const runtime = err as SwerexRuntimeError;
    expect(runtime.code).toBe(code);
    expect(runtime.message).toBe(message);
    expect(runtime.classPath).toBe(classPath);
    expect(runtime.extraInfo).toEqual(extraInfo);
    expect(runtime.traceback).toBe('Traceback ...');
    expect(runtime.details).toMatchObject({
      status: 511,
      classPath,
      extraInfo,
      instanceName: 'sb-9',
      path: '/run_in_session',
    });
    expect(server?.requests).toHaveLength(1);
  });

  it('treats a 511 without a swerexception body as SWEREX_HTTP', async () => {
    const client = await clientAnswering((_req, res) => sendJson(res, 511, { other: true }));
    expect((await rejectionOf(client.execute({ command: 'x' }))).code).toBe('SWEREX_HTTP');
  });
});

describe('gateway and HTTP status mapping', () => {
  it('maps the vefaas-local dead-instance answer to SANDBOX_DEAD without retrying', async () => {
    const client = await clientAnswering((_req, res) =>
      sendJson(res, 404, { error: { code: 'InstanceNotFound', message: 'instance sb-9 not found' } }),
    );
    const err = await rejectionOf(client.runInSession({ command: 'ls' }));
    expect(err.code).toBe('SANDBOX_DEAD');
    expect(err.message).toContain('InstanceNotFound');
    expect(server?.requests).toHaveLength(1);
  });

  it('keeps SWE-ReX own 404/422 answers as SWEREX_HTTP', async () => {
    const client = await clientAnswering((req, res) =>
      req.url.pathname === '/read_file'
        ? sendJson(res, 404, { detail: 'Not Found' })
        : sendJson(res, 422, { detail: [{ type: 'union_tag_not_found', loc: ['body'], msg: 'x', input: {} }] }),
    );
    const notFound = await rejectionOf(client.readFile({ path: '/x' }));
    expect(notFound.code).toBe('SWEREX_HTTP');
    expect(notFound.message).toContain('Not Found');
    expect((await rejectionOf(client.closeSession())).code).toBe('SWEREX_HTTP');
  });

  it('rejects a 200 body that does not match the model', async () => {
    const client = await clientAnswering((_req, res) => sendJson(res, 200, { stdout: 3 }));
    expect((await rejectionOf(client.execute({ command: 'x' }))).code).toBe('SWEREX_HTTP');
  });

  it('maps a refused connection to SWEREX_NETWORK after bounded retries', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as { port: number };
    probe.close();
    await once(probe, 'close');
    const client = new SwerexClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: '',
      retries: 1,
      backoff: { minDelayMs: 1 },
    });
    const err = await rejectionOf(client.writeFile({ path: '/x', content: '' }));
    expect(err.code).toBe('SWEREX_NETWORK');
    expect(err.retryable).toBe(true);
  });
});

describe('classifyGatewayResponse', () => {
  const none = {};
  it.each([
    [200, '{"output":""}', 'upstream'],
    [511, '{"swerexception":{}}', 'upstream'],
    [404, '{"detail":"Not Found"}', 'upstream'],
    [401, '{"detail":"Invalid API Key"}', 'upstream'],
    [404, '{"error":{"code":"InstanceNotFound","message":"gone"}}', 'dead'],
    [502, '{"error":{"code":"InstanceNotFound"}}', 'dead'],
    [404, 'no route', 'dead'],
    [410, '', 'dead'],
    [502, 'bad gateway', 'transient'],
    [503, '{"detail":"x"}', 'transient'],
    [504, '<html>timeout</html>', 'transient'],
    [401, '{"message":"Unauthorized"}', 'auth'],
    [429, 'slow down', 'upstream'],
    // vefaas-local gateway answers (packages/vefaas-local/src/gateway/gateway.ts)
    [401, '{"error":{"code":"Unauthorized","message":"missing or invalid gateway key"}}', 'auth'],
    [503, '{"error":{"code":"InstanceNotReady","message":"instance sb is starting"}}', 'transient'],
    [504, '{"error":{"code":"UpstreamTimeout","message":"x"}}', 'transient'],
    [400, '{"error":{"code":"MissingInstanceName","message":"x"}}', 'upstream'],
  ] as const)('HTTP %i %s → %s', (status, body, kind) => {
    expect(classifyGatewayResponse(status, none, body).kind).toBe(kind);
  });

  it('follows configured rules for a gateway that answers differently', () => {
    const rules = { deadStatuses: [502], deadErrorCodes: ['ResourceNotFound'], transientStatuses: [503] };
    expect(classifyGatewayResponse(502, none, 'upstream connect error', rules).kind).toBe('dead');
    expect(classifyGatewayResponse(404, none, 'no route', rules).kind).toBe('upstream');
    expect(classifyGatewayResponse(500, none, '{"error":{"code":"ResourceNotFound"}}', rules).kind).toBe('dead');
    expect(classifyGatewayResponse(504, none, 'timeout', rules).kind).toBe('upstream');
  });
});
