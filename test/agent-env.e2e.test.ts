/**
 * AgentEnv end to end against vefaas-local with real bubblewrap sandboxes, through the real signed
 * VefaasClient and the gateway route: the seed's flow, timeouts that keep the session usable, the spec's
 * env in the session, idempotent close / `await using`, and — the point of issue 4's last line — no sandbox
 * left behind when start() fails half-way (never alive, session/tool set-up fails, aborted mid-start),
 * checked both on the control plane (ListSandboxes) and on the host (sandbox pids).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AgentEnv,
  createVefaasClient,
  type AgentEnvOptions,
  type VefaasClient,
  type VefaasTarget,
} from '@rollout-fleet/sandbox';
import { createLogger, SandboxSpecSchema, type SandboxSpec } from '@rollout-fleet/shared';
import { startVefaasLocal, type VefaasLocalHandle, type VefaasLocalOptions } from '@rollout-fleet/vefaas-local';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

const IMAGES_DIR = fileURLToPath(new URL('../examples/images', import.meta.url));
const silent = createLogger({ level: 'silent', format: 'json' });

interface Host {
  handle: VefaasLocalHandle;
  vefaas: VefaasClient;
  target: VefaasTarget;
  close(): Promise<void>;
}

async function startHost(options: VefaasLocalOptions = {}): Promise<Host> {
  const handle = await startVefaasLocal({ isolation: 'bwrap', imagesDir: IMAGES_DIR, logger: silent, ...options });
  const vefaas = createVefaasClient({
    endpoint: handle.controlPlaneUrl,
    region: handle.region,
    credentials: { accessKeyId: handle.accessKeyId, secretAccessKey: handle.secretAccessKey },
    retry: false,
  });
  return {
    handle,
    vefaas,
    target: { vefaas, functionId: handle.functionId, gatewayUrl: handle.gatewayUrl },
    close: async () => {
      await vefaas.close();
      await handle.close();
    },
  };
}

function spec(overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  return SandboxSpecSchema.parse({ image: 'python', startup_timeout_s: 20, ...overrides });
}

/** A per-test label, so ListSandboxes finds exactly this test's sandboxes (even one whose id we never learned). */
function labelled(host: Host, extra: Partial<AgentEnvOptions> = {}): { env: AgentEnv; label: Record<string, string> } {
  const label = { 'rf-test': randomUUID() };
  const env = new AgentEnv({ target: host.target, sandbox: spec(), metadata: label, logger: silent, ...extra });
  return { env, label };
}

/** Nothing of this test is listed by the control plane and no sandbox process runs on the host. */
async function expectNothingLeft(host: Host, label: Record<string, string>): Promise<void> {
  await vi.waitFor(
    async () => {
      const listed = await host.vefaas.listAllSandboxes({ FunctionId: host.handle.functionId, Metadata: label });
      expect(listed.map((s) => `${s.Id} ${s.Status}`)).toEqual([]);
      expect(host.handle.sandboxPids()).toEqual([]);
    },
    { timeout: 15_000, interval: 50 },
  );
}

describeWith([bwrapNeed()], 'AgentEnv against vefaas-local (bubblewrap)', () => {
  let host: Host;

  beforeAll(async () => {
    // 'immediately': CreateSandbox answers while Starting, as the real service may, so start() must wait itself.
    host = await startHost({ createReturns: 'immediately' });
  });
  afterAll(async () => {
    await host?.close();
  });

  it("runs the seed's flow: start, install tools, which, edit and run a script, read its output", async () => {
    const { env, label } = labelled(host);
    try {
      const timings = await env.start();
      expect(env.sandboxId).toMatch(/^sbx-/);
      expect(timings.aliveMs).toBeGreaterThanOrEqual(timings.createMs);
      await env.installTools(['execute_bash', 'str_replace_editor']);
      expect((await env.communicate('which str_replace_editor')).trim()).toMatch(/\/str_replace_editor$/);
      const created = await env.communicate(
        `str_replace_editor create --path /tmp/demo.py --file_text 'print(sum([1, 2, 3]))\n'`,
      );
      expect(created).toContain('File created successfully at: /tmp/demo.py');
      expect(await env.run("execute_bash 'python3 /tmp/demo.py > /tmp/demo_out.txt'")).toMatchObject({
        exitCode: 0,
        timedOut: false,
      });
      expect(await env.communicate('cat /tmp/demo_out.txt')).toBe('6\n');
      const failing = await env.run('ls /no/such/dir');
      expect(failing.exitCode).toBe(2);
      expect(failing.output).toContain('No such file or directory');
    } finally {
      await env.close();
    }
    await expectNothingLeft(host, label);
  });

  it('interrupts a command that times out and keeps the session usable', async () => {
    await using env = new AgentEnv({ target: host.target, sandbox: spec(), logger: silent });
    await env.start();
    await env.run('export MARK=still-here');
    const started = performance.now();
    const slept = await env.run('sleep 30', { timeoutS: 1 });
    expect(slept).toMatchObject({ timedOut: true, exitCode: null });
    expect(slept.durationMs).toBeGreaterThanOrEqual(1000);
    // Same shell, same variables: the session survived the interrupt.
    expect(await env.run('echo $MARK')).toMatchObject({ output: 'still-here\n', exitCode: 0, timedOut: false });
    expect(performance.now() - started).toBeLessThan(10_000);
    await expect(env.communicate('sleep 30', { timeoutS: 1 })).rejects.toMatchObject({
      code: 'SWEREX_COMMAND_TIMEOUT',
    });
    expect(await env.communicate('echo again')).toBe('again\n');
  });

  it("puts the spec's env variables (hostile values included) and the pager defaults into the session", async () => {
    const hostile = `it's "quoted" $(touch /tmp/pwned) \`id\`\nsecond line`;
    await using env = new AgentEnv({
      target: host.target,
      sandbox: spec({ env: { RF_E2E_VALUE: hostile, PAGER: 'less' } }),
      logger: silent,
    });
    await env.start();
    expect(await env.communicate('printf %s "$RF_E2E_VALUE"')).toBe(hostile);
    expect(await env.communicate('echo "$PAGER $GIT_PAGER"')).toBe('less cat\n');
    expect(await env.run('test -e /tmp/pwned')).toMatchObject({ exitCode: 1 });
  });

  it('close() is idempotent and `await using` kills the sandbox at the end of the block', async () => {
    const label = { 'rf-test': randomUUID() };
    let sandboxId: string | undefined;
    {
      await using env = new AgentEnv({ target: host.target, sandbox: spec(), metadata: label, logger: silent });
      await env.start();
      sandboxId = env.sandboxId;
      const listed = await host.vefaas.listAllSandboxes({ FunctionId: host.handle.functionId, Metadata: label });
      expect(listed.map((s) => s.Id)).toEqual([sandboxId]);
      const closes = [env.close(), env.close()];
      expect(closes[0]).toBe(closes[1]);
      await Promise.all(closes);
      await env.close();
      const described = await host.vefaas
        .describeSandbox({ FunctionId: host.handle.functionId, SandboxId: sandboxId! })
        .catch((err: unknown) => err);
      // KillSandbox answers at once; the sandbox is Terminating until its processes are gone, then unknown.
      expect(described).toSatisfy(
        (d) =>
          (d as { Status?: string }).Status === 'Terminating' || (d as { code?: string }).code === 'VEFAAS_NOT_FOUND',
      );
    } // the disposer runs close() once more: still fine
    await expectNothingLeft(host, label);
    // Never started: close() has nothing to do and does not throw.
    await new AgentEnv({ target: host.target, sandbox: spec(), logger: silent }).close();
  });

  describe('start() failing half-way leaves no sandbox behind', () => {
    afterAll(() => host.handle.faults.reset());

    it('(a) created but never alive: /is_alive hangs past the startup timeout', async () => {
      host.handle.faults.configure({ gateway: { hang: { '/is_alive': 1 } } });
      const { env, label } = labelled(host, { sandbox: spec({ startup_timeout_s: 1 }) });
      const started = performance.now();
      await expect(env.start()).rejects.toMatchObject({ code: 'SANDBOX_START_TIMEOUT' });
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(env.sandboxId).toBeDefined();
      expect(host.handle.sandboxPids().length).toBeGreaterThanOrEqual(1);
      await env.close();
      await expectNothingLeft(host, label);
      host.handle.faults.reset();
    });

    it('(a) created but never alive: still Starting (cold start) at the startup timeout', async () => {
      host.handle.faults.configure({ coldStart: { delayMs: 60_000 } });
      const { env, label } = labelled(host, { sandbox: spec({ startup_timeout_s: 1 }) });
      await expect(env.start()).rejects.toMatchObject({ code: 'SANDBOX_START_TIMEOUT' });
      const [listed] = await host.vefaas.listAllSandboxes({ FunctionId: host.handle.functionId, Metadata: label });
      expect(listed?.Status).toBe('Starting');
      await env.close();
      await expectNothingLeft(host, label);
      host.handle.faults.reset();
    });

    it('(a) the sandbox Failed (unknown image): start fails fast as a configuration error, close() removes it', async () => {
      const { env, label } = labelled(host, { sandbox: spec({ image: 'does-not-exist', startup_timeout_s: 60 }) });
      const started = performance.now();
      await expect(env.start()).rejects.toMatchObject({ code: 'SANDBOX_IMAGE_UNAVAILABLE', class: 'input' });
      expect(performance.now() - started).toBeLessThan(15_000);
      await env.close();
      await expectNothingLeft(host, label);
    });

    it('(b) the instance dies while the session is created', async () => {
      host.handle.faults.configure({ gateway: { instanceDeathRate: { '/create_session': 1 } } });
      const { env, label } = labelled(host);
      await expect(env.start()).rejects.toMatchObject({ code: 'SANDBOX_DEAD' });
      await env.close();
      await expectNothingLeft(host, label);
      host.handle.faults.reset();
    });

    it('(b) the gateway fails every call while the tools are installed', async () => {
      const { env, label } = labelled(host);
      await env.start();
      // 500 is not a transient gateway status: the upload fails at once, without retries.
      host.handle.faults.configure({ gateway: { errorRate: 1, errorStatus: 500 } });
      await expect(env.installTools(['execute_bash', 'str_replace_editor'])).rejects.toMatchObject({
        code: 'SWEREX_HTTP',
      });
      host.handle.faults.reset();
      await env.close();
      await expectNothingLeft(host, label);
    });

    it('rejects an env name the shell cannot export before creating anything', async () => {
      const { env, label } = labelled(host, { sandbox: spec({ env: { 'NOT-A-NAME': 'x' } }) });
      await expect(env.start()).rejects.toMatchObject({ code: 'INPUT_INVALID' });
      await env.close();
      await expectNothingLeft(host, label);
    });

    it('(c) aborted while waiting for the sandbox to become alive', async () => {
      host.handle.faults.configure({ coldStart: { delayMs: 60_000 } });
      const abort = new AbortController();
      const { env, label } = labelled(host, {
        signal: abort.signal,
        onCreated: async () => void setImmediate(() => abort.abort(new Error('shutdown'))),
      });
      await expect(env.start()).rejects.toThrow('shutdown');
      expect(env.sandboxId).toBeDefined();
      await env.close();
      await expectNothingLeft(host, label);
      host.handle.faults.reset();
    });
  });
});

describeWith([bwrapNeed()], 'AgentEnv aborted while CreateSandbox is in flight', () => {
  let host: Host;

  beforeAll(async () => {
    // 'started': CreateSandbox answers only once the sandbox is Ready, so an abort can land before the id is known.
    host = await startHost({ createReturns: 'started', faults: { coldStart: { delayMs: 60_000 } } });
  });
  afterAll(async () => {
    await host?.close();
  });

  it('(c) kills the sandbox it never learned the id of', async () => {
    const abort = new AbortController();
    const { env, label } = labelled(host, { signal: abort.signal });
    const starting = env.start();
    await vi.waitFor(() => expect(host.handle.sandboxCounts().Starting).toBe(1), { timeout: 10_000, interval: 20 });
    abort.abort(new Error('shutdown'));
    await expect(starting).rejects.toThrow('shutdown');
    expect(env.sandboxId).toBeUndefined();
    await env.close();
    await expectNothingLeft(host, label);
    expect(host.handle.sandboxCounts().total).toBe(0);
  });
});
