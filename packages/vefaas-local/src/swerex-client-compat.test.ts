/**
 * The shared SwerexClient drives a real bubblewrap sandbox THROUGH THE GATEWAY: pinning by header or by
 * query reaches the same sandbox (header wins), a lost response is retried with the same X-Request-ID and
 * replayed rather than re-run, 511s become typed errors (never retried), a directory uploads, and a killed
 * sandbox is SANDBOX_DEAD. An undici interceptor on the shared pool sees (and can disturb) the real requests.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  closeSharedDispatchers,
  createVefaasClient,
  dispatcherFor,
  SwerexClient,
  SwerexRuntimeError,
  type SwerexClientOptions,
  type VefaasClient,
} from '@rollout-fleet/sandbox';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startVefaasLocal, type VefaasLocalHandle } from './host.js';
import { swerexCommand } from '../test/control-plane-caller.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

interface Seen {
  path: string;
  headers: Record<string, string>;
}

type Rewrite = (opts: Dispatcher.DispatchOptions) => Dispatcher.DispatchOptions;

/** The shared pool, composed with an interceptor that records every request (after an optional rewrite). */
function recording(origin: string, rewrite: Rewrite = (o) => o): { dispatcher: Dispatcher; seen: Seen[] } {
  const seen: Seen[] = [];
  const dispatcher = dispatcherFor(origin).compose((dispatch) => (opts, handler) => {
    const sent = rewrite(opts);
    seen.push({ path: sent.path, headers: { ...(sent.headers as Record<string, string>) } });
    return dispatch(sent, handler);
  });
  return { dispatcher, seen };
}

/**
 * Delivers the first matching request to the server, then drops its answer and fails the call with a
 * connection reset — what a client sees when a proxy dies after forwarding. Later requests pass through.
 */
function losingFirstAnswer(origin: string, endpoint: string): { dispatcher: Dispatcher; seen: Seen[] } {
  const seen: Seen[] = [];
  let lost = false;
  const dispatcher = dispatcherFor(origin).compose((dispatch) => (opts, handler) => {
    seen.push({ path: opts.path, headers: { ...(opts.headers as Record<string, string>) } });
    if (lost || !opts.path.includes(`/${endpoint}`)) return dispatch(opts, handler);
    lost = true;
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    return dispatch(opts, {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onResponseStart: () => undefined,
      onResponseData: () => undefined,
      onResponseEnd: (controller) => handler.onResponseError?.(controller, reset),
      onResponseError: (controller, err) => handler.onResponseError?.(controller, err),
    });
  });
  return { dispatcher, seen };
}

function withoutQuery(path: string): string {
  const url = new URL(path, 'http://x');
  url.searchParams.delete('faasInstanceName');
  return `${url.pathname}${url.search}`;
}

describeWith([bwrapNeed()], 'the shared SwerexClient through the vefaas-local gateway (bubblewrap)', () => {
  let host: VefaasLocalHandle;
  let vefaas: VefaasClient;
  const tokens = new Map<string, string>();
  let first: string;
  let second: string;

  const createSandbox = async (): Promise<string> => {
    const token = randomUUID();
    const { SandboxId } = await vefaas.createSandbox({
      FunctionId: host.functionId,
      // No Image: an empty /testbed (this host has no images dir).
      InstanceImageInfo: { Command: swerexCommand(token), Port: 8000 },
    });
    tokens.set(SandboxId, token);
    return SandboxId;
  };
  const client = (sandboxId: string, extra: Partial<SwerexClientOptions> = {}): SwerexClient =>
    new SwerexClient({
      baseUrl: host.gatewayUrl,
      instanceName: sandboxId,
      apiKey: tokens.get(sandboxId)!,
      backoff: { minDelayMs: 10, maxDelayMs: 50 },
      ...extra,
    });

  beforeAll(async () => {
    host = await startVefaasLocal({ isolation: 'bwrap' });
    vefaas = createVefaasClient({
      endpoint: host.controlPlaneUrl,
      region: host.region,
      credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
      retry: false,
    });
    [first, second] = await Promise.all([createSandbox(), createSandbox()]);
  });
  afterAll(async () => {
    await closeSharedDispatchers();
    await vefaas?.close();
    await host?.close();
  });

  it('reaches the same sandbox pinned by header only or by query only; the header wins over the query', async () => {
    const origin = new URL(host.gatewayUrl).origin;
    const byHeader = recording(origin, (opts) => ({ ...opts, path: withoutQuery(opts.path) }));
    const headerClient = client(first, { dispatcher: byHeader.dispatcher });
    const byQuery = recording(origin);
    const queryClient = new SwerexClient({
      baseUrl: `${host.gatewayUrl}?faasInstanceName=${first}`,
      apiKey: tokens.get(first)!,
      dispatcher: byQuery.dispatcher,
    });

    const path = `/tmp/pin-${randomUUID()}`;
    await headerClient.writeFile({ path, content: 'written by header pin\n' });
    expect(await queryClient.readFile({ path })).toEqual({ content: 'written by header pin\n' });
    // Each really used one pin only.
    expect(
      byHeader.seen.every((s) => !s.path.includes('faasInstanceName') && s.headers['x-faas-instance-name'] === first),
    ).toBe(true);
    expect(
      byQuery.seen.every(
        (s) => s.path.includes(`faasInstanceName=${first}`) && s.headers['x-faas-instance-name'] === undefined,
      ),
    ).toBe(true);

    // The other sandbox does not have the file.
    await expect(client(second).readFile({ path })).rejects.toBeInstanceOf(SwerexRuntimeError);
    // Header says `first`, query says `second`: the header wins (vefaas-api.md §3).
    const conflicting = recording(origin, (opts) => ({
      ...opts,
      path: opts.path.replace(`faasInstanceName=${first}`, `faasInstanceName=${second}`),
    }));
    const content = await client(first, { dispatcher: conflicting.dispatcher }).readFile({ path });
    expect(content.content).toBe('written by header pin\n');
    expect(conflicting.seen[0]?.path).toContain(`faasInstanceName=${second}`);
  });

  it('retries a call whose answer was lost with the same X-Request-ID; the server replays it instead of running it again', async () => {
    const origin = new URL(host.gatewayUrl).origin;
    const lossy = losingFirstAnswer(origin, 'run_in_session');
    const rex = client(first, { dispatcher: lossy.dispatcher });
    const session = `replay-${randomUUID()}`;
    const file = `/tmp/replay-${randomUUID()}`;
    await rex.createSession({ session });
    const observation = await rex.runInSession({ session, command: `echo ran >> ${file}; wc -l < ${file}` });
    expect(observation.output.trim()).toBe('1');
    const runs = lossy.seen.filter((s) => s.path.includes('/run_in_session'));
    expect(runs).toHaveLength(2);
    expect(runs[0]?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(runs[1]?.headers['x-request-id']).toBe(runs[0]?.headers['x-request-id']);
    // The side effect happened once.
    expect((await client(first).execute({ command: `cat ${file}`, shell: true })).stdout).toBe('ran\n');
    // Distinct calls get distinct ids.
    const ids = new Set(lossy.seen.filter((s) => s.headers['x-request-id']).map((s) => s.headers['x-request-id']));
    expect(ids.size).toBe(2);
  });

  it('turns 511 answers into typed errors with class path, message and extra_info, and never retries them', async () => {
    const traced = recording(new URL(host.gatewayUrl).origin);
    const rex = client(first, { dispatcher: traced.dispatcher });
    const session = `errors-${randomUUID()}`;
    await rex.createSession({ session });

    const timeout = await rex.runInSession({ session, command: 'sleep 10', timeout: 0.5 }).catch((err: unknown) => err);
    expect(timeout).toBeInstanceOf(SwerexRuntimeError);
    expect(timeout).toMatchObject({
      code: 'SWEREX_COMMAND_TIMEOUT',
      classPath: 'swerex.exceptions.CommandTimeoutError',
      retryable: false,
    });
    expect((timeout as SwerexRuntimeError).message).toContain(
      "timeout after 0.5 seconds while running command 'sleep 10'",
    );
    await rex.interrupt(session);

    const syntax = await rex.runInSession({ session, command: 'echo (' }).catch((err: unknown) => err);
    expect(syntax).toMatchObject({
      code: 'SWEREX_BASH_SYNTAX',
      classPath: 'swerex.exceptions.BashIncorrectSyntaxError',
    });
    const extra = (syntax as SwerexRuntimeError).extraInfo;
    expect(Object.keys(extra).sort()).toEqual(['bash_stderr', 'bash_stdout']);
    expect(extra['bash_stderr']).toMatch(/syntax error/);

    const runs = traced.seen.filter((s) => s.path.includes('/run_in_session'));
    expect(runs).toHaveLength(3); // timeout, interrupt, syntax: one request each
    expect((await rex.runInSession({ session, command: 'echo usable' })).output).toBe('usable\n');
  });

  it('uploads a directory (zipped on the wire, extracted in the sandbox)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-upload-'));
    try {
      await mkdir(join(dir, 'nested', 'deeper'), { recursive: true });
      await writeFile(join(dir, 'top.txt'), 'top\n');
      await writeFile(join(dir, 'nested', 'deeper', 'leaf.py'), 'print("leaf")\n');
      const rex = client(first);
      const target = `/tmp/uploaded-${randomUUID()}`;
      await rex.upload({ source: dir, targetPath: target });
      expect((await rex.readFile({ path: `${target}/top.txt` })).content).toBe('top\n');
      const ran = await rex.execute({
        command: `cd ${target} && find . -type f | sort && python3 nested/deeper/leaf.py`,
        shell: true,
      });
      expect(ran).toMatchObject({ stdout: './nested/deeper/leaf.py\n./top.txt\nleaf\n', exit_code: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports SANDBOX_DEAD for a sandbox killed with KillSandbox, and is_alive says not alive', async () => {
    const doomed = await createSandbox();
    const rex = client(doomed);
    expect(await rex.isAlive()).toEqual({ is_alive: true, message: '' });
    await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId: doomed });
    await expect(rex.execute({ command: 'true', shell: true })).rejects.toMatchObject({
      code: 'SANDBOX_DEAD',
      retryable: false,
    });
    const probe = await rex.isAlive();
    expect(probe.is_alive).toBe(false);
    expect(probe.message).toContain('InstanceNotFound');
  });
});
