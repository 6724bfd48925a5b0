/**
 * Our own session set-up against a stalled sandbox (vefaas-local fault `shellStall`: the shell freezes right after
 * a command's prompt, so SWE-ReX's 1 s exit-code fetch runs out and the session is left a prompt behind — what a
 * loaded machine does). A stall is infrastructure: the set-up must not fail on it, and above all a restart after
 * the model broke its shell must not be graded as the model's failure (SESSION_RESTART_FAILED). A shell the model
 * poisoned still is. AgentEnv through the signed client, the gateway and real bubblewrap sandboxes.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { AgentEnv, createVefaasClient, type VefaasClient } from '@rollout-fleet/sandbox';
import { createLogger, SandboxSpecSchema } from '@rollout-fleet/shared';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

const IMAGES_DIR = fileURLToPath(new URL('../examples/images', import.meta.url));
const silent = createLogger({ level: 'silent', format: 'json' });
/** Longer than SWE-ReX's 1 s exit-code wait: every stalled fetch runs out. */
const STALL = { rate: 1, ms: 1500 };

describeWith([bwrapNeed()], 'session set-up on a stalled sandbox (bubblewrap)', () => {
  let handle: VefaasLocalHandle;
  let vefaas: VefaasClient;

  beforeAll(async () => {
    handle = await startVefaasLocal({ isolation: 'bwrap', imagesDir: IMAGES_DIR, logger: silent });
    vefaas = createVefaasClient({
      endpoint: handle.controlPlaneUrl,
      region: handle.region,
      credentials: { accessKeyId: handle.accessKeyId, secretAccessKey: handle.secretAccessKey },
      retry: false,
    });
  });
  afterEach(() => {
    handle.faults.reset();
  });
  afterAll(async () => {
    await vefaas?.close();
    await handle?.close();
  });

  const newEnv = (): AgentEnv =>
    new AgentEnv({
      target: { vefaas, functionId: handle.functionId, gatewayUrl: handle.gatewayUrl },
      sandbox: SandboxSpecSchema.parse({ image: 'python', startup_timeout_s: 20, env: { RF_MARK: 'kept' } }),
      logger: silent,
    });

  /** The session works and is in step: each command answers with its own output. */
  async function expectInStep(env: AgentEnv): Promise<void> {
    expect(await env.run('echo "$RF_MARK $PAGER"')).toMatchObject({ output: 'kept cat\n', exitCode: 0 });
    expect(await env.run('echo second')).toMatchObject({ output: 'second\n', exitCode: 0 });
  }

  it('the first session is set up although every exit-code fetch stalls', async () => {
    await using env = newEnv();
    handle.faults.configure({ shellStall: STALL });
    await env.start();
    await env.installTools(['str_replace_editor']);
    handle.faults.reset();
    await expectInStep(env);
    expect(await env.run('command -v str_replace_editor')).toMatchObject({ exitCode: 0 });
  });

  it('a restart after `exit` on a stalled sandbox is not the model’s failure: the new session is set up and in step', async () => {
    await using env = newEnv();
    await env.start();
    await env.installTools(['str_replace_editor']);
    handle.faults.configure({ shellStall: STALL });
    expect(await env.run('exit')).toMatchObject({ sessionLost: 'ended' });
    await env.restartSession();
    handle.faults.reset();
    await expectInStep(env);
    expect((await env.run('command -v str_replace_editor')).output).toMatch(/\/str_replace_editor\n$/);
  });

  it("the warm pool's liveness probe finds a stalled but healthy sandbox alive, and leaves its session in step", async () => {
    await using env = newEnv();
    await env.start();
    handle.faults.configure({ shellStall: STALL });
    // On SWE-ReX's exit-code fetch this answered false (exit_code null): a good warm sandbox discarded and killed.
    expect(await env.probe({ timeoutMs: 10_000 })).toBe(true);
    expect(await env.probe({ timeoutMs: 10_000 })).toBe(true);
    handle.faults.reset();
    await expectInStep(env);
  });

  it('a new session whose shell is out of step is replaced by a fresh one (the second is fine)', async () => {
    await using env = newEnv();
    await env.start();
    // The next shell to start prints an extra prompt after every command; the ones after it are normal.
    await env.run(
      `echo '[ -e /tmp/rf-once ] || { touch /tmp/rf-once; PROMPT_COMMAND="printf SHELLPS1PREFIX"; }' >> ~/.bashrc`,
    );
    await env.run('exit');
    await env.restartSession();
    expect(await env.run('test -e /tmp/rf-once')).toMatchObject({ exitCode: 0 });
    await expectInStep(env);
  });

  it('a session born a prompt behind is brought back in step (under load the start line is echoed and its SHELLPS1PREFIX taken for the prompt; here ~/.bashrc prints one)', async () => {
    await using env = newEnv();
    await env.start();
    await env.run(`echo 'printf SHELLPS1PREFIX' >> ~/.bashrc`);
    await env.run('exit');
    await env.restartSession();
    await expectInStep(env);
  });

  it('a poisoned ~/.bashrc is still the model’s doing: SESSION_RESTART_FAILED (model), stall or not', async () => {
    for (const poison of ["echo 'exit' >> ~/.bashrc", `echo 'PROMPT_COMMAND="printf SHELLPS1PREFIX"' >> ~/.bashrc`]) {
      await using env = newEnv();
      await env.start();
      await env.run(poison);
      handle.faults.configure({ shellStall: STALL });
      await env.run('exit');
      await expect(env.restartSession(), poison).rejects.toMatchObject({
        code: 'SESSION_RESTART_FAILED',
        class: 'model',
      });
      handle.faults.reset();
    }
  });
});
