/**
 * Infrastructure faults injected by vefaas-local (seeded) against the real pipeline: gateway 5xx and an
 * instance that dies mid-episode are retried to a completed, correctly graded result, with every failed
 * attempt and its code kept in `attempts`; CreateSandbox throttling (429 AccountFlowLimitExceeded) is waited
 * out by the sandbox supply without spending an attempt; an image the platform cannot start
 * (function_initialize_failed) ends `failed` / class input with no reward (never 0) after one attempt; an
 * infrastructure fault that never clears spends every attempt and ends `failed` with reward null, never 0.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { jobIdFor, type Episode, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  SWEEP,
  collectResults,
  configOf,
  episode,
  fleetSandboxes,
  leasesOf,
  openPipeline,
  readExpected,
  readSweep,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

const SEED = 7;

describeWith([bwrapNeed()], 'injected infrastructure faults', () => {
  let host: Host;
  let sweep: Episode[];
  let pipeline: Pipeline | undefined;
  let workers: RunningWorker[] = [];

  beforeAll(async () => {
    host = await startHost();
    const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: 'template' });
    expect(validated.problems).toEqual([]);
    sweep = validated.episodes;
  });

  afterEach(async () => {
    host.handle.faults.configure({ seed: SEED });
    await Promise.all(workers.map((w) => w.close()));
    workers = [];
    if (pipeline) {
      // Every test leaves the platform clean: killed attempts' sandboxes included.
      const config = pipeline.config;
      await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]), {
        timeout: 15_000,
        interval: 100,
      });
      expect(await pipeline.redis.zcard(pipeline.keys.leases())).toBe(0);
      await pipeline.close();
    }
    pipeline = undefined;
  });

  afterAll(async () => {
    await host?.close();
  });

  /** calc-add from the sweep (resolves, reward 1) under a new id, with `before` steps replayed first. */
  function calcAdd(runId: string, episodeId: string, before: Episode['trajectory'] = []): Episode {
    const template = sweep.find((e) => e.episode_id === 'pyutils__calc-add')!;
    return { ...template, run_id: runId, episode_id: episodeId, trajectory: [...before, ...template.trajectory] };
  }

  async function start(
    runId: string,
    episodes: Episode[],
    env: Record<string, string>,
    concurrency = 1,
  ): Promise<Pipeline> {
    const config = configOf(testEnv(env));
    pipeline = openPipeline(config);
    const summary = await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId,
      episodes,
      policy: { attempts: config.worker.attempts, backoffMs: config.worker.backoffMs, retentionS: 3600 },
    });
    expect(summary.enqueued).toBe(episodes.length);
    workers.push(await startWorker({ config, target: host.target, logger: silentLogger, concurrency }));
    return pipeline;
  }

  /** Resolves once the job has finished `steps` steps of its current attempt. */
  async function stepsDone(p: Pipeline, jobId: string, steps: number): Promise<void> {
    await vi.waitFor(
      async () => {
        const job = await p.queue.getJob(jobId);
        expect(await job?.getState()).toBe('active');
        expect((job?.progress as { step?: number } | undefined)?.step).toBeGreaterThanOrEqual(steps);
      },
      { timeout: 30_000, interval: 50 },
    );
  }

  /** Resolves once `count` failed attempts are recorded on the job (the processor writes them before a retry). */
  async function failedAttempts(p: Pipeline, jobId: string, count: number): Promise<void> {
    await vi.waitFor(async () => expect((await p.queue.getJob(jobId))?.data.attempts ?? []).toHaveLength(count), {
      timeout: 30_000,
      interval: 50,
    });
  }

  function expectRetriedToSuccess(result: EpisodeResult, failureCodes: string[]): void {
    expect(result).toMatchObject({ status: 'completed', resolved: true, reward: 1, failure: null });
    expect(result.attempts.map((a) => a.attempt)).toEqual(result.attempts.map((_, i) => i + 1));
    expect(result.attempts.map((a) => a.failure?.code ?? null)).toEqual([...failureCodes, null]);
    for (const attempt of result.attempts.slice(0, -1)) expect(attempt.failure?.class).toBe('infra');
    expect(result.attempts.at(-1)?.sandbox_id).toBe(result.sandbox_id);
    // Each attempt that got a sandbox had its own.
    const sandboxes = result.attempts.flatMap((a) => (a.sandbox_id === null ? [] : [a.sandbox_id]));
    expect(new Set(sandboxes).size).toBe(sandboxes.length);
  }

  it('gateway 5xx mid-episode: the attempt fails as GATEWAY_ERROR and the retry completes', async () => {
    const runId = 'faults-gateway';
    const p = await start(
      runId,
      [
        calcAdd(runId, 'gw', [
          { name: 'execute_bash', arguments: { command: 'echo one' } },
          { name: 'execute_bash', arguments: { command: 'sleep 2' } },
        ]),
      ],
      { RF_ATTEMPTS: '3', RF_BACKOFF_MS: '200' },
    );
    const jobId = jobIdFor(runId, 'gw', 0);

    await stepsDone(p, jobId, 1);
    // From the third step on, every gateway request of this attempt answers 502.
    host.handle.faults.configure({ seed: SEED, gateway: { errorRate: 1 } });
    await failedAttempts(p, jobId, 1);
    expect(host.handle.faults.stats.injectedErrors).toBeGreaterThanOrEqual(2);
    // The retry may already be probing /is_alive; it gets through once the faults are off.
    host.handle.faults.configure({ seed: SEED });

    const [result] = (await collectResults(p, runId, 1)) as [EpisodeResult];
    expectRetriedToSuccess(result, ['GATEWAY_ERROR']);
    expect(result.steps).toHaveLength(5);
    expect(result.steps.every((s) => s.error === undefined)).toBe(true);
  });

  it('an instance killed mid-episode: the attempt fails as SANDBOX_DEAD and the retry completes', async () => {
    const runId = 'faults-dead';
    const p = await start(
      runId,
      [
        calcAdd(runId, 'dead', [
          { name: 'execute_bash', arguments: { command: 'echo one' } },
          { name: 'execute_bash', arguments: { command: 'sleep 5' } },
        ]),
      ],
      { RF_ATTEMPTS: '3', RF_BACKOFF_MS: '200' },
    );
    const jobId = jobIdFor(runId, 'dead', 0);

    await stepsDone(p, jobId, 1);
    const sandboxId = (await leasesOf(p))[0]?.sandbox;
    const killed = await fetch(`${host.handle.controlPlaneUrl}/_admin/sandboxes/${sandboxId}/kill-instance`, {
      method: 'POST',
    });
    expect(killed.status).toBe(200);

    const [result] = (await collectResults(p, runId, 1)) as [EpisodeResult];
    expectRetriedToSuccess(result, ['SANDBOX_DEAD']);
    expect(result.attempts[0]?.sandbox_id).toBe(sandboxId);
    expect(result.steps.map((s) => s.exit_code)).toEqual([0, 0, 0, 0, 0]);
  });

  it('CreateSandbox throttling (429 AccountFlowLimitExceeded): every episode completes and no attempt is spent on it', async () => {
    const runId = 'faults-throttle';
    const ids = ['t1', 't2', 't3', 't4'];
    host.handle.faults.configure({ seed: SEED, throttle: { createPerSecond: 1 } });
    // The fleet is told it may create far faster than the platform allows: the platform's 429s must lower it.
    const p = await start(
      runId,
      ids.map((id) => calcAdd(runId, id)),
      { RF_ATTEMPTS: '1', RF_FLEET_CREATE_RATE: '20', RF_FLEET_CREATE_BURST: '4' },
      ids.length,
    );

    const results = await collectResults(p, runId, ids.length);
    expect(host.handle.faults.stats.throttled).toBeGreaterThan(0);
    expect(results.map((r) => r.episode_id).sort()).toEqual(ids);
    for (const result of results) {
      // One attempt each, even with RF_ATTEMPTS=1: a 429 is waited out, never a failed attempt.
      expectRetriedToSuccess(result, []);
    }
    const supply = workers[0]!.supply;
    expect((await supply.limiter.peek('default', {})).ratePerS).toBeLessThan(20);
  });

  it('seeded gateway 5xx over the whole sweep: outcomes still match examples/expected.json', async () => {
    const runId = 'faults-sweep';
    host.handle.faults.configure({ seed: SEED, gateway: { errorRate: 0.1 } });
    const p = await start(
      runId,
      sweep.map((e) => ({ ...e, run_id: runId })),
      { RF_ATTEMPTS: '5', RF_BACKOFF_MS: '200' },
      3,
    );

    const results = await collectResults(p, runId, sweep.length);
    expect(host.handle.faults.stats.injectedErrors).toBeGreaterThan(0);
    const expected = await readExpected();
    expect(Object.fromEntries(results.map((r) => [r.instance_id, r.resolved]))).toEqual(
      Object.fromEntries(Object.entries(expected).map(([id, e]) => [id, e.resolved])),
    );
    for (const result of results) {
      expect(result).toMatchObject({ status: 'completed', failure: null, reward: result.resolved ? 1 : 0 });
      expect(result.attempts.at(-1)?.failure).toBeNull();
      for (const attempt of result.attempts.slice(0, -1)) expect(attempt.failure?.class).toBe('infra');
      // A gateway fault must never show up as a model observation.
      expect(
        result.steps.filter((s) => s.error?.code.startsWith('GATEWAY') || s.error?.code.startsWith('SANDBOX')),
      ).toEqual([]);
    }
  });

  it('an infrastructure fault that never clears: every attempt fails as infra, the result is failed with reward null (never 0)', async () => {
    const runId = 'faults-persistent';
    // Every gateway request answers 502 for the whole test: no attempt can ever reach its sandbox's runtime.
    host.handle.faults.configure({ seed: SEED, gateway: { errorRate: 1 } });
    const down = calcAdd(runId, 'down');
    const p = await start(runId, [{ ...down, sandbox: { ...down.sandbox, startup_timeout_s: 2 } }], {
      RF_ATTEMPTS: '2',
      RF_BACKOFF_MS: '100',
    });

    const [result] = (await collectResults(p, runId, 1)) as [EpisodeResult];
    expect(host.handle.faults.stats.injectedErrors).toBeGreaterThan(0);
    expect(result).toMatchObject({ status: 'failed', resolved: null, reward: null });
    expect(result.failure?.class).toBe('infra');
    // Both attempts were spent, each on its own sandbox, each failed as infrastructure.
    expect(result.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    for (const attempt of result.attempts) expect(attempt.failure?.class).toBe('infra');
    expect(await p.redis.hgetall(p.keys.run(runId))).toMatchObject({ done: '1', failed: '1' });
  });

  it('an unknown image is a configuration error at the first create: failed, class input, no reward, not retried', async () => {
    const runId = 'faults-no-image';
    const broken = episode(runId, 'no-image', { sandbox: { image: 'no-such-image' } });
    const p = await start(runId, [broken], { RF_ATTEMPTS: '3', RF_BACKOFF_MS: '100' });

    const [result] = (await collectResults(p, runId, 1)) as [EpisodeResult];
    expect(result).toMatchObject({ status: 'failed', resolved: null, reward: null, report: null, steps: [] });
    expect(result.failure).toMatchObject({ code: 'SANDBOX_IMAGE_UNAVAILABLE', class: 'input' });
    expect(result.failure?.message).toContain('function_initialize_failed');
    // Retrying cannot make a missing image appear: one attempt, not three.
    expect(result.attempts.map((a) => a.failure?.code)).toEqual(['SANDBOX_IMAGE_UNAVAILABLE']);
    const jobId = jobIdFor(runId, 'no-image', 0);
    // The state first, then a fresh read of the job: a job read before it moved to failed still says 0 attempts.
    await vi.waitFor(async () => expect(await p.queue.getJobState(jobId)).toBe('failed'), { timeout: 10_000 });
    const job = (await p.queue.getJob(jobId))!;
    expect(job.attemptsMade).toBe(1);
    expect(await p.redis.hgetall(p.keys.run(runId))).toMatchObject({ done: '1', failed: '1' });
  });
});
