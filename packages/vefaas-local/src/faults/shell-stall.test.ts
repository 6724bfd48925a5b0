/**
 * Fault `shellStall` through the gateway to a real bubblewrap sandbox: the shell freezes right after a command's
 * prompt, the reference's 1 s exit-code wait runs out, and the session is left one prompt behind — what a
 * starved CPU does to SWE-ReX's bash session.
 */
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { startVefaasLocal, type VefaasLocalHandle } from '../host.js';
import { okResult, swerexCommand } from '../../test/control-plane-caller.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';

const TOKEN = 'stall-token';

describeWith([bwrapNeed()], 'fault shellStall (real bubblewrap sandbox)', () => {
  let host: VefaasLocalHandle;
  let post: (path: string, body: unknown, extra?: Record<string, string>) => Promise<Record<string, unknown>>;

  beforeAll(async () => {
    host = await startVefaasLocal({ isolation: 'bwrap' });
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', {
      FunctionId: host.functionId,
      InstanceImageInfo: { Command: swerexCommand(TOKEN), Port: 8000 },
    });
    post = async (path, body, extra = {}) => {
      const headers = {
        'x-faas-instance-name': SandboxId,
        'x-api-key': TOKEN,
        'content-type': 'application/json',
        ...extra,
      };
      const response = await request(`${host.gatewayUrl}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
      return (await response.body.json()) as Record<string, unknown>;
    };
  });
  afterAll(async () => {
    await host?.close();
  });

  const run = (session: string, command: string, check = 'silent', extra?: Record<string, string>) =>
    post('/run_in_session', { action_type: 'bash', session, command, timeout: 30, check }, extra);

  it('a stalled exit-code fetch gives exit_code null and leaves the session a prompt behind', async () => {
    await post('/create_session', { session_type: 'bash', session: 's1' });
    host.faults.configure({ shellStall: { rate: 1, ms: 1500, match: 'stall-me' } });
    try {
      expect(await run('s1', 'echo a # stall-me')).toMatchObject({ output: 'a\n', exit_code: null });
      // The next command matches the late prompt: it "returns" before it ran, with the stale exit code.
      expect(await run('s1', 'echo b')).toMatchObject({ output: '', exit_code: 0 });
      expect(await run('s1', 'echo c')).toMatchObject({ output: 'b\n', exit_code: 0 });
      // No exit-code step, no stall.
      expect(await run('s1', 'echo d # stall-me', 'ignore')).toMatchObject({ exit_code: null });
      // Counted per request the gateway told to stall, whether or not `match` then selected its command.
      expect(host.faults.stats.shellStalls).toBe(4);
    } finally {
      host.faults.reset();
    }
  });

  it('only the fault controller can ask for a stall: a client header is dropped by the gateway', async () => {
    await post('/create_session', { session_type: 'bash', session: 's2' });
    const header = { 'x-vefaas-local-shell-stall': JSON.stringify({ ms: 1500 }) };
    expect(await run('s2', 'echo x', 'silent', header)).toMatchObject({ output: 'x\n', exit_code: 0 });
    expect(await run('s2', 'echo y')).toMatchObject({ output: 'y\n', exit_code: 0 });
  });
});
