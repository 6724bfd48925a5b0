/**
 * Outcome integrity on a stalled sandbox (vefaas-local fault `shellStall`: the shell freezes right after a
 * command's prompt, SWE-ReX's 1 s exit-code fetch runs out and the session is left a prompt behind, as on a
 * loaded machine — the integrity-chaos flakes). A stall is infrastructure: an episode that fixes the bug gets
 * reward 1 (or null if infra persisted), never 0 — neither when the stall hits the restart after `exit`, nor when
 * it makes the last step "return" before it ran. A model that desyncs its own shell on purpose gets graded, in
 * one attempt (no null to hide behind, no reward for commands that had not run). Real pipeline, bubblewrap bash.
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

const bash = (command: string): Episode['trajectory'][number] => ({ name: 'execute_bash', arguments: { command } });
const SED = "sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py";
const FIX = bash(SED);
/**
 * The stall hits the commands marked `rf-stall` and the restart's "tools on PATH" command (`if [ -d …`), which
 * only a restart sends — so the first start is not stalled and the old code got as far as the restart.
 */
const STALL = { rate: 1, ms: 1500, match: '^if \\[ -d |rf-stall' };

describe('a stalled sandbox is infrastructure, never the model’s 0', () => {
  let host: Host;
  let pipeline: Pipeline;
  let worker: RunningWorker;
  const results = new Map<string, EpisodeResult>();

  beforeAll(async () => {
    host = await startHost({ faults: { shellStall: STALL } });
    const config = configOf(testEnv({ RF_BACKOFF_MS: '100' }));
    pipeline = openPipeline(config);
    const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: 'stall' });
    const template = validated.episodes.find((e) => e.episode_id === 'pyutils__calc-add') as Episode;
    const cases: Record<string, Episode['trajectory']> = {
      // The restart after `exit` is stalled (symptom 1: was SESSION_RESTART_FAILED, reward 0).
      'restart-stalled': [bash('exit'), FIX],
      // The first step's exit code is missed: the fix step "returns" at the stale prompt before it ran, and the
      // patch was taken before the shell got to it (symptom 2: reward 0, no failure).
      'late-fix': [bash('echo one # rf-stall'), bash(`sleep 2; ${SED}`)],
      // The model desyncs its shell on purpose: every step answers early; the shell catches up before extraction.
      'self-desync': [bash(`PROMPT_COMMAND='printf SHELLPS1PREFIX'`), FIX, bash('sleep 1')],
      // … and keeps printing the fallback terminator from the background, ahead of our markers: whether one of
      // them still gets through depends on the scheduler, so either outcome is a grade, never a retry or null.
      'self-desync-flood': [
        bash(`PROMPT_COMMAND='printf SHELLPS1PREFIX'`),
        FIX,
        bash('while :; do echo UNIQUESTRING29234; sleep 0.01; done &'),
      ],
      // The model shadows printf, which prints our markers: the shell can never show one — graded as the tree stands.
      'no-markers': [FIX, bash('printf() { :; }')],
    };
    const episodes = Object.entries(cases).map(([id, trajectory]) => ({
      ...template,
      run_id: 'stall',
      episode_id: id,
      trajectory,
    }));
    await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: 'stall', episodes });
    worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 4 });
    for (const result of await collectResults(pipeline, 'stall', episodes.length))
      results.set(result.episode_id, result);
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await pipeline?.close();
    await host?.close();
  });

  const summary = (id: string) => {
    const r = results.get(id);
    return { status: r?.status, reward: r?.reward, failure: r?.failure ?? null, attempts: r?.attempts.length };
  };

  it('a restart on a stalled sandbox is not the model’s failure: the fix after it is graded 1', () => {
    expect(summary('restart-stalled')).toEqual({ status: 'completed', reward: 1, failure: null, attempts: 1 });
    expect(host.handle.faults.stats.shellStalls).toBeGreaterThan(0);
  });

  it('a fix step that answered before it ran is waited for: reward 1, not 0', () => {
    const r = results.get('late-fix');
    expect(summary('late-fix')).toEqual({ status: 'completed', reward: 1, failure: null, attempts: 1 });
    // The reference's view of the stall stays as it was: the stalled step has no exit code.
    expect(r?.steps[0]).toMatchObject({ output: 'one\n', exit_code: null });
  });

  it('a model that desyncs its own shell is graded on what it ran, in one attempt', () => {
    expect(summary('self-desync')).toEqual({ status: 'completed', reward: 1, failure: null, attempts: 1 });
  });

  it('a model that also floods the terminator is graded on its tree in one attempt, never null', () => {
    const r = summary('self-desync-flood');
    expect(r).toMatchObject({ status: 'completed', reward: 1, attempts: 1 });
    // Caught up (no failure) or never caught up (the model's doing): which one depends on the scheduler.
    if (r.failure !== null) expect(r.failure).toMatchObject({ code: 'SESSION_OUT_OF_SYNC', class: 'model' });
  });

  it('a shell that can never show our marker is graded as its tree stands (SESSION_OUT_OF_SYNC, model), never null', () => {
    expect(summary('no-markers')).toMatchObject({
      status: 'completed',
      reward: 1,
      attempts: 1,
      failure: { code: 'SESSION_OUT_OF_SYNC', class: 'model' },
    });
  });
});
