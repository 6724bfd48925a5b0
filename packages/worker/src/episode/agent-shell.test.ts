/**
 * The step shell of an attempt (recorded-agent.ts `agentShell`): after the model broke its session, the new one
 * is set up again by the recorded agent — same repository directory, variables and tools — and a set-up that
 * the model made impossible is the model's doing, while a sandbox that stops answering stays infra.
 */
import { describe, expect, it } from 'vitest';
import { EpisodeSchema, RolloutError, coerceError, type Episode } from '@rollout-fleet/shared';
import { SwerexRuntimeError, type SetupOutcome } from '@rollout-fleet/sandbox';
import { agentShell, recordedAgentFor, type RestartableSession } from './recorded-agent.js';

const episode = (extra: Record<string, unknown> = {}): Episode =>
  EpisodeSchema.parse({
    run_id: 'r',
    episode_id: 'e',
    instance_id: 'i',
    sandbox: { image: 'pyutils' },
    repo_dir: '/work dir/repo',
    ...extra,
  });

const ok: SetupOutcome = { ran: true, status: 0, output: '' };

/**
 * A session that records what ran in it; `answer` decides each set-up command's outcome (or throws). Its restart
 * runs the agent's set-up once (AgentEnv's own retries in fresh sessions are tested in agent-env.test.ts).
 */
function session(answer: (command: string) => SetupOutcome | Error = () => ok): RestartableSession & {
  log: string[];
  restartError?: Error;
} {
  const s = {
    log: [] as string[],
    restartError: undefined as Error | undefined,
    run: async (command: string) => {
      s.log.push(`run: ${command}`);
      return { output: '', exitCode: 0, durationMs: 1, timedOut: false };
    },
    runSetup: async (command: string) => {
      s.log.push(command);
      const out = answer(command);
      if (out instanceof Error) throw out;
      return out;
    },
    readFile: async () => '',
    restartSession: async (options: { setup?: () => Promise<void> } = {}) => {
      s.log.push('<restart>');
      if (s.restartError) throw s.restartError;
      await options.setup?.();
    },
  };
  return s;
}

describe('agentShell: a new session is set up as the first one was', () => {
  it('our own tools: the new session goes back into repo_dir', async () => {
    const s = session();
    await agentShell(s, recordedAgentFor(episode())).restartSession?.();
    expect(s.log).toEqual(['<restart>', "cd -- '/work dir/repo'"]);
  });

  it("SWE-agent's tools: back into repo_dir with the bundle's variables and PATH, the registry left as it was", async () => {
    const s = session();
    const bundle = { name: 'swe-agent', version: '1.1', bundles: ['windowed', 'search'] };
    await agentShell(s, recordedAgentFor(episode({ tool_bundle: bundle }))).restartSession?.();
    expect(s.log[0]).toBe('<restart>');
    expect(s.log[1]).toContain("cd -- '/work dir/repo'");
    const setup = s.log[2] ?? '';
    expect(setup).toContain("export ROOT='/work dir/repo'");
    expect(setup).toContain('export WINDOW=100');
    expect(setup).toMatch(/export PATH=\S*swe-agent\/search\/bin:\S*swe-agent\/windowed\/bin:"\$PATH"/);
    // The registry (open file, window) is state the tools keep in a file: a restart must not reset it.
    expect(setup).not.toContain('swe-agent-env');
    expect(s.log).toHaveLength(3);
  });

  it('a repository the model removed: the restart fails as the model’s doing (SESSION_RESTART_FAILED)', async () => {
    const s = session((c) =>
      c.startsWith('cd ') ? { ran: true, status: 1, output: 'bash: cd: No such file or directory\n' } : ok,
    );
    const err = await agentShell(s, recordedAgentFor(episode()))
      .restartSession?.()
      .then(
        () => undefined,
        (e: unknown) => coerceError(e),
      );
    expect(err).toMatchObject({ code: 'SESSION_RESTART_FAILED', class: 'model' });
    expect(err?.message).toContain('No such file or directory');
  });

  it('a set-up whose outcome stays unknown (no end marker) is given to the restart to retry, and ends as the model’s doing', async () => {
    const s = session(() => ({ ran: false, output: 'SHELLPS1PREFIX' }));
    const err = await agentShell(s, recordedAgentFor(episode()))
      .restartSession?.()
      .then(
        () => undefined,
        (e: unknown) => coerceError(e),
      );
    expect(err).toMatchObject({ code: 'SESSION_RESTART_FAILED', class: 'model' });
    expect((err?.cause as RolloutError | undefined)?.code).toBe('SESSION_SETUP_AMBIGUOUS');
  });

  it('a set-up command the server refused is the model’s doing too', async () => {
    const s = session(() => new SwerexRuntimeError({ classPath: 'builtins.RuntimeError', message: 'bash died' }));
    const err = await agentShell(s, recordedAgentFor(episode()))
      .restartSession?.()
      .then(
        () => undefined,
        (e: unknown) => coerceError(e),
      );
    expect(err).toMatchObject({ code: 'SESSION_RESTART_FAILED', class: 'model' });
  });

  it('a sandbox that stops answering during the set-up stays infra (retried)', async () => {
    const s = session(() => new RolloutError('SANDBOX_DEAD', 'gone'));
    const err = await agentShell(s, recordedAgentFor(episode()))
      .restartSession?.()
      .then(
        () => undefined,
        (e: unknown) => coerceError(e),
      );
    expect(err).toMatchObject({ code: 'SANDBOX_DEAD', class: 'infra' });
  });

  it('a restart the sandbox refuses is passed on as it is', async () => {
    const s = session();
    s.restartError = new RolloutError('SESSION_RESTART_FAILED', 'poisoned ~/.bashrc');
    const err = await agentShell(s, recordedAgentFor(episode()))
      .restartSession?.()
      .then(
        () => undefined,
        (e: unknown) => coerceError(e),
      );
    expect(err).toMatchObject({ code: 'SESSION_RESTART_FAILED' });
    expect(s.log).toEqual(['<restart>']);
  });
});
