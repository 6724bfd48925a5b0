/**
 * A broken shell is the model's doing (issue #9 item 2): a step that ends its bash session (`exit`,
 * `kill -9 $$`, an `exec` that ends) or wedges it (ignores Ctrl-C and Ctrl-Z) is recorded, a new session is
 * started in the same sandbox with the same environment and tools, the next observation says so, and the
 * episode goes on to be graded: reward 0 or 1, never null, in one attempt. Real pipeline, default config.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Episode, EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  SWEEP,
  collectResults,
  configOf,
  openPipeline,
  readSweep,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const bash = (command: string, timeout_s?: number): Episode['trajectory'][number] => ({
  name: 'execute_bash',
  arguments: { command },
  ...(timeout_s === undefined ? {} : { timeout_s }),
});
const FIX = bash("sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py");
/** The session environment and the tools survive a restart: the episode's env var and str_replace_editor. */
const CHECK = bash('echo "marker=$RF_MARKER"; command -v str_replace_editor');
/** A SWE-agent recording's tools survive too: the new session is set up again by the recorded agent. */
const CHECK_SWE_AGENT = bash('echo "root=$ROOT window=$WINDOW marker=$RF_MARKER"; command -v open');

describe('a broken shell is the model’s doing', () => {
  let host: Host;
  let pipeline: Pipeline;
  let worker: RunningWorker;
  const results = new Map<string, EpisodeResult>();

  beforeAll(async () => {
    host = await startHost();
    const config = configOf(testEnv({ RF_BACKOFF_MS: '100' }));
    pipeline = openPipeline(config);
    const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: 'shell' });
    const template = validated.episodes.find((e) => e.episode_id === 'pyutils__calc-add') as Episode;
    const sandbox = { ...template.sandbox, env: { RF_MARKER: 'kept' } };
    const cases: Record<string, Episode['trajectory']> = {
      exit: [bash('exit'), CHECK, FIX],
      'kill-self': [bash('kill -9 $$'), CHECK, FIX],
      'exec-ends': [bash('exec true'), CHECK, FIX],
      // Ctrl-C and Ctrl-Z are ignored, so the interrupt fails and the shell never answers again.
      wedged: [bash("trap '' INT TSTP; sleep 300", 1), CHECK, FIX],
      // The model poisons what every new shell reads, then ends its shell: no session can start again.
      'poisoned-rc': [FIX, bash("echo 'exit' >> ~/.bashrc"), bash('exit'), CHECK],
    };
    const episodes: Episode[] = Object.entries(cases).map(([id, trajectory]) => ({
      ...template,
      run_id: 'shell',
      episode_id: id,
      sandbox,
      trajectory,
    }));
    // Recorded with SWE-agent's windowed tools: its variables and bundle PATH are set up again after the restart.
    episodes.push({
      ...template,
      run_id: 'shell',
      episode_id: 'swe-agent-exit',
      sandbox,
      tool_bundle: {
        name: 'swe-agent',
        version: '1.1',
        bundles: ['windowed'],
        window: 77,
        overlap: 2,
        pty_observations: false,
      },
      trajectory: [bash('exit'), CHECK_SWE_AGENT, FIX],
    });
    await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: 'shell', episodes });
    worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 6 });
    for (const result of await collectResults(pipeline, 'shell', episodes.length))
      results.set(result.episode_id, result);
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await pipeline?.close();
    await host?.close();
  });

  function expectRecovered(id: string, code: string, how: string): void {
    const result = results.get(id);
    expect(result).toMatchObject({ status: 'completed', resolved: true, reward: 1, failure: null });
    expect(result?.attempts).toHaveLength(1);
    const [broken, next] = result?.steps ?? [];
    expect(broken?.error?.code).toBe(code);
    expect(next?.output).toContain(`The command '${broken?.command}' ${how}. A new shell session was started`);
    expect(next?.output).toContain('marker=kept');
    expect(next?.output).toMatch(/\/str_replace_editor$/m);
    expect(next?.error).toBeUndefined();
  }

  it('`exit` ends the session: recorded, a new session runs the rest, graded resolved', () => {
    expectRecovered('exit', 'SWEREX_SESSION_ENDED', 'ended the shell session');
  });

  it('`kill -9 $$` likewise', () => {
    expectRecovered('kill-self', 'SWEREX_SESSION_ENDED', 'ended the shell session');
  });

  it('an `exec` that ends likewise', () => {
    expectRecovered('exec-ends', 'SWEREX_SESSION_ENDED', 'ended the shell session');
  });

  it("a SWE-agent recording: the new session has the agent's variables and tools again (the recorded agent's set-up re-runs)", () => {
    const result = results.get('swe-agent-exit');
    expect(result).toMatchObject({ status: 'completed', resolved: true, reward: 1, failure: null });
    const next = result?.steps[1];
    expect(next?.output).toContain("The command 'exit' ended the shell session. A new shell session was started");
    expect(next?.output).toContain('root=/testbed window=77 marker=kept');
    expect(next?.output).toMatch(/\/swe-agent\/windowed\/bin\/open$/m);
  });

  it('a command that cannot be interrupted: the timeout observation, then a new session', () => {
    expectRecovered('wedged', 'SWEREX_INTERRUPT_FAILED', 'could not be interrupted and the shell stopped answering');
    expect(results.get('wedged')?.steps[0]).toMatchObject({ timed_out: true });
    expect(results.get('wedged')?.steps[0]?.output).toContain('was cancelled because it took more than 1 seconds');
  });

  it('when no new session will start, the rest is not run and the patch so far is graded (model failure, reward by the rule)', () => {
    const result = results.get('poisoned-rc');
    expect(result).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
    expect(result?.failure).toMatchObject({ code: 'SESSION_RESTART_FAILED', class: 'model' });
    expect(result?.steps).toHaveLength(3);
    expect(result?.steps[2]?.error?.code).toBe('SESSION_RESTART_FAILED');
    expect(result?.attempts).toHaveLength(1);
  });
});
