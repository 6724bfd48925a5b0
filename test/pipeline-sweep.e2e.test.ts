/**
 * The examples/ sweep end to end: validate + submit, two in-process workers against a real vefaas-local
 * (bubblewrap sandboxes) and real Redis, follow the results. Every outcome matches examples/expected.json,
 * steps and reports are recorded, the job return value points at the result, a second submission of the
 * same run enqueues nothing and writes no duplicate, and no sandbox or lease is left behind.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { EpisodeResultSchema, jobIdFor, parseResultValue, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  SWEEP,
  collectResults,
  configOf,
  fleetSandboxes,
  openPipeline,
  readExpected,
  readSweep,
  resultsOf,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

const RUN = 'sweep-e2e';
const TIMEOUT_OBSERVATION =
  "The command 'sleep 30' was cancelled because it took more than 1 seconds. Please try a different command that " +
  'completes more quickly. Note: A common source of this error is if the command is interactive or requires user ' +
  'input (it is impossible to receive user input in the current environment, so the command will never complete).';

describeWith([bwrapNeed()], 'examples sweep on vefaas-local + Redis', () => {
  let host: Host;
  let pipeline: Pipeline;
  let workers: RunningWorker[] = [];
  let results: EpisodeResult[] = [];
  let expected: Record<string, { resolved: boolean }>;
  let total = 0;

  beforeAll(async () => {
    host = await startHost();
    const config = configOf(testEnv({ RF_BACKOFF_MS: '200' }));
    pipeline = openPipeline(config);
    expected = await readExpected();
    const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: RUN });
    expect(validated.problems).toEqual([]);
    const summary = await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: validated.episodes,
    });
    expect(summary).toMatchObject({ total: 6, enqueued: 6, skippedDone: 0, skippedQueued: 0 });
    total = summary.total;
    workers = await Promise.all(
      ['w1', 'w2'].map((workerId) =>
        startWorker({ config, target: host.target, logger: silentLogger, concurrency: 3, workerId }),
      ),
    );
    results = await collectResults(pipeline, RUN, total);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await pipeline?.close();
    await host?.close();
  });

  it('gives every episode the outcome examples/expected.json names', () => {
    const outcomes = Object.fromEntries(results.map((r) => [r.instance_id, r.resolved]));
    expect(outcomes).toEqual(Object.fromEntries(Object.entries(expected).map(([id, e]) => [id, e.resolved])));
    for (const result of results) {
      expect(EpisodeResultSchema.parse(result)).toBeTruthy();
      expect(result).toMatchObject({ run_id: RUN, status: 'completed', failure: null });
      expect(result.reward).toBe(result.resolved ? 1 : 0);
      expect(['w1', 'w2']).toContain(result.worker_id);
    }
  });

  it('records the steps: a timeout observation, error observations, and the rest run normally', () => {
    const byId = new Map(results.map((r) => [r.instance_id, r]));
    const fizz = byId.get('pyutils__fizz-order')!;
    const timedOut = fizz.steps.filter((s) => s.timed_out);
    expect(timedOut).toHaveLength(1);
    expect(timedOut[0]).toMatchObject({
      index: 0,
      command: 'sleep 30',
      output: TIMEOUT_OBSERVATION,
      exit_code: null,
      error: { code: 'STEP_TIMEOUT' },
    });
    expect(fizz.resolved).toBe(true);

    const stats = byId.get('pyutils__stats-mean')!;
    const errors = stats.steps.filter((s) => s.error !== undefined);
    expect(errors.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(errors[1]?.error?.code).toBe('SWEREX_BASH_SYNTAX');
    expect(errors[1]?.output).toMatch(/^Your bash command contained syntax errors and was NOT executed/);
    expect(errors.every((s) => !s.timed_out)).toBe(true);
    expect(stats.resolved).toBe(true);

    const add = byId.get('pyutils__calc-add')!;
    expect(add.steps).toHaveLength(3);
    expect(add.steps[2]).toMatchObject({ tool: 'execute_bash', exit_code: 0, timed_out: false, truncated: false });
    expect(add.steps[2]?.output.trim()).toBe('5');
    for (const result of results) {
      expect(result.steps.map((s) => s.index)).toEqual(result.steps.map((_, i) => i));
    }
  });

  it('keeps report fields, timings and attempts on every result', () => {
    for (const result of results) {
      expect(result.report).toMatchObject({ patch_is_None: false, resolved: result.resolved });
      // SWE-bench reports test statuses only when there was a patch to apply.
      if (result.report?.patch_exists) expect(result.report.tests_status?.FAIL_TO_PASS).toBeDefined();
      expect(result.timings.total_ms).toBeGreaterThan(0);
      expect(result.timings.sandbox_acquire_ms).toBeGreaterThan(0);
      expect(result.timings.replay_ms).toBeGreaterThan(0);
      expect(result.timings.grade_ms).toBeGreaterThan(0);
      expect(result.attempts).toHaveLength(1);
      expect(result.attempts[0]).toMatchObject({
        attempt: 1,
        failure: null,
        worker_id: result.worker_id,
        sandbox_id: result.sandbox_id,
      });
    }
    const slug = results.find((r) => r.instance_id === 'pyutils__slug-lower')!;
    expect(slug.patch?.trim()).toBe('');
    expect(slug.report?.patch_exists).toBe(false);
    const regress = results.find((r) => r.instance_id === 'pyutils__calc-regress')!;
    expect(regress.report?.tests_status?.PASS_TO_PASS.failure).toEqual([
      'test_mul (tests.test_basic.TestBasic.test_mul)',
    ]);
  });

  it('points each BullMQ job’s return value at its stored result', async () => {
    for (const result of results) {
      const key = pipeline.keys.result(RUN, result.episode_id, 0);
      await vi.waitFor(
        async () => {
          const job = await pipeline.queue.getJob(jobIdFor(RUN, result.episode_id, 0));
          expect(await job?.getState()).toBe('completed');
          expect(job?.returnvalue).toEqual({
            result_key: key,
            status: 'completed',
            resolved: result.resolved,
            reward: result.reward,
            stored: true,
          });
        },
        { timeout: 10_000 },
      );
      // As stored: JSON, brotli-compressed behind a tag byte when large (store/result-codec.ts).
      expect(parseResultValue((await pipeline.redis.getBuffer(key))!)).toEqual(result);
    }
  });

  it('resumes without duplicates: a second submission enqueues nothing and writes nothing', async () => {
    const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: RUN });
    const again = await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: validated.episodes,
    });
    expect(again).toMatchObject({ total: 6, enqueued: 0, skippedDone: 6, skippedQueued: 0 });
    const counts = await pipeline.queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    expect(counts).toEqual({ waiting: 0, active: 0, delayed: 0, completed: 6, failed: 0 });
    expect(await resultsOf(pipeline, RUN)).toHaveLength(6);
    expect(await pipeline.redis.hgetall(pipeline.keys.run(RUN))).toMatchObject({
      total: '6',
      done: '6',
      completed: '6',
    });
    expect(Number((await pipeline.redis.hget(pipeline.keys.run(RUN), 'duplicates')) ?? 0)).toBe(0);
  });

  it('leaves no live sandbox and no lease', async () => {
    // Killed sandboxes pass through Terminating until their processes are gone.
    await vi.waitFor(
      async () => {
        expect(host.handle.liveSandboxes()).toBe(0);
        expect(await fleetSandboxes(host, pipeline.config)).toEqual([]);
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(await pipeline.redis.zcard(pipeline.keys.leases())).toBe(0);
    expect(await pipeline.redis.keys(pipeline.keys.lease('*'))).toEqual([]);
  });
});
