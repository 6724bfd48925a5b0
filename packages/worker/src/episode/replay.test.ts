import { describe, expect, it } from 'vitest';
import { RolloutError, type ToolCall } from '@rollout-fleet/shared';
import { SwerexRuntimeError, toolCallToCommand } from '@rollout-fleet/sandbox';
import { prefetchNow } from './run-attempt.js';
import { replayTrajectory, type StepShell } from './replay.js';

const call = (command: string): ToolCall => ({ name: 'execute_bash', arguments: { command } });

type Ran = Awaited<ReturnType<StepShell['run']>>;

/** A shell that answers each command from a script; `restart` records calls and may throw. */
function scriptedShell(
  answers: Record<string, Ran | Error>,
  restart?: () => Promise<void>,
): StepShell & { restarts: number; ran: string[] } {
  const shell = {
    restarts: 0,
    ran: [] as string[],
    run: async (command: string): Promise<Ran> => {
      shell.ran.push(command);
      const answer = answers[command] ?? { output: `${command}\n`, exitCode: 0, durationMs: 1, timedOut: false };
      if (answer instanceof Error) throw answer;
      return answer;
    },
    restartSession: async (): Promise<void> => {
      shell.restarts += 1;
      await restart?.();
    },
  };
  return shell;
}

const options = { stepTimeoutS: 5, outputLimitBytes: 10_000, toCommand: toolCallToCommand };

describe('replayTrajectory: a broken shell', () => {
  it('records a step that ended its session, starts a new one and says so in the next observation', async () => {
    const shell = scriptedShell({
      exit: { output: '', exitCode: null, durationMs: 1, timedOut: false, sessionLost: 'ended' },
    });
    const { steps, stopped } = await replayTrajectory({ ...options, shell, trajectory: [call('exit'), call('pwd')] });
    expect(stopped).toBeNull();
    expect(shell.restarts).toBe(1);
    expect(steps[0]).toMatchObject({ command: 'exit', output: '', error: { code: 'SWEREX_SESSION_ENDED' } });
    expect(steps[1]?.output).toBe(
      "The command 'exit' ended the shell session. A new shell session was started in the repository directory with the " +
        "episode's environment and tools: variables, aliases and shell functions set in the old session are gone.\npwd\n",
    );
    expect(steps[1]?.error).toBeUndefined();
  });

  it('keeps the timeout observation of a step that could not be interrupted, then restarts', async () => {
    const shell = scriptedShell({
      'sleep 9': { output: '', exitCode: null, durationMs: 1, timedOut: true, sessionLost: 'unresponsive' },
    });
    const { steps } = await replayTrajectory({ ...options, shell, trajectory: [call('sleep 9'), call('ls')] });
    expect(steps[0]).toMatchObject({ timed_out: true, error: { code: 'SWEREX_INTERRUPT_FAILED' } });
    expect(steps[0]?.output).toContain("The command 'sleep 9' was cancelled because it took more than 5 seconds.");
    expect(steps[1]?.output).toContain('could not be interrupted and the shell stopped answering');
  });

  it('stops, graded, when no new session will start (a model failure), without running the rest', async () => {
    const restartFailure = new RolloutError('SESSION_RESTART_FAILED', 'a new bash session would not start: EOF');
    const shell = scriptedShell(
      { exit: { output: '', exitCode: null, durationMs: 1, timedOut: false, sessionLost: 'ended' } },
      () => Promise.reject(restartFailure),
    );
    const { steps, stopped } = await replayTrajectory({
      ...options,
      shell,
      trajectory: [call('exit'), call('pwd'), call('ls')],
    });
    expect(stopped).toMatchObject({ code: 'SESSION_RESTART_FAILED', class: 'model' });
    expect(steps).toHaveLength(1);
    expect(steps[0]?.error?.code).toBe('SESSION_RESTART_FAILED');
    expect(shell.ran).toEqual(['exit']);
  });

  it('fails the attempt when the sandbox itself is gone during the restart (infra)', async () => {
    const shell = scriptedShell(
      { exit: { output: '', exitCode: null, durationMs: 1, timedOut: false, sessionLost: 'ended' } },
      () => Promise.reject(new RolloutError('SANDBOX_DEAD', 'gone')),
    );
    await expect(
      replayTrajectory({ ...options, shell, trajectory: [call('exit'), call('pwd')] }),
    ).rejects.toMatchObject({ code: 'SANDBOX_DEAD' });
  });

  it('propagates infra errors of a step and turns model errors into observations (with bash -n output)', async () => {
    const syntax = new SwerexRuntimeError({
      classPath: 'swerex.exceptions.BashIncorrectSyntaxError',
      message: 'bad',
      extraInfo: { bash_stdout: '', bash_stderr: 'bash: line 1: syntax error near unexpected token' },
    });
    const shell = scriptedShell({ '(a': syntax, boom: new RolloutError('SWEREX_NETWORK', 'down') });
    const { steps } = await replayTrajectory({ ...options, shell, trajectory: [call('(a')] });
    expect(steps[0]?.output).toContain('Your bash command contained syntax errors and was NOT executed.');
    expect(steps[0]?.output).toContain('syntax error near unexpected token');
    await expect(replayTrajectory({ ...options, shell, trajectory: [call('boom')] })).rejects.toMatchObject({
      code: 'SWEREX_NETWORK',
    });
  });

  it('starts no step after the episode deadline: the rest is not run, a model failure (graded)', async () => {
    let clock = 0;
    const shell = scriptedShell({});
    const trajectory = [call('a'), call('b'), call('c')];
    const replayed = replayTrajectory({
      ...options,
      shell,
      trajectory,
      deadline: 10,
      now: () => clock,
      onStep: () => void (clock += 10),
    });
    const { steps, stopped } = await replayed;
    expect(steps.map((s) => s.command)).toEqual(['a']);
    expect(stopped).toMatchObject({ code: 'EPISODE_DEADLINE', class: 'model' });
    expect(stopped?.message).toContain('2 step(s) not run');
  });
});

describe('prefetchNow', () => {
  it('starts the grading sandbox when the remaining steps take no longer than a sandbox start, or at the last step', () => {
    // 10 steps of 100 ms done, 5 left (≈500 ms) vs a 2 s start: now.
    expect(prefetchNow(10, 15, 1000, 2000)).toBe(true);
    // 1 done, 50 left at 1 s each vs a 2 s start: not yet.
    expect(prefetchNow(1, 51, 1000, 2000)).toBe(false);
    // The last step is about to run.
    expect(prefetchNow(9, 10, 90_000, 10)).toBe(true);
  });
});
