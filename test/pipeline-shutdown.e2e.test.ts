/**
 * Graceful shutdown and fresh-sandbox grading. A worker told to stop while an episode runs past its
 * grace period hands the job back without spending an attempt and kills the sandbox; another worker then
 * completes it. With fresh-eval, grading happens in a new sandbox from the image with the patch applied.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { jobIdFor } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker } from '@rollout-fleet/worker';
import {
  SWEEP,
  collectResults,
  configOf,
  episode,
  fleetSandboxes,
  openPipeline,
  readSweep,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

describeWith([bwrapNeed()], 'worker shutdown and fresh-eval grading', () => {
  let host: Host;
  const pipelines: Pipeline[] = [];

  beforeAll(async () => {
    host = await startHost();
  });
  afterAll(async () => {
    await Promise.all(pipelines.map((p) => p.close()));
    await host?.close();
  });

  it('hands a running episode back after the grace period, kills its sandbox, and another worker finishes it', async () => {
    const config = configOf(testEnv({ RF_SHUTDOWN_GRACE_S: '1' }));
    const pipeline = openPipeline(config);
    pipelines.push(pipeline);
    const runId = 'shutdown';
    const long = episode(runId, 'long', {
      trajectory: [
        { name: 'execute_bash', arguments: { command: 'sleep 8' }, timeout_s: 60 },
        { name: 'execute_bash', arguments: { command: 'echo done' } },
      ],
    });
    await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId, episodes: [long] });
    const jobId = jobIdFor(runId, 'long', 0);

    const first = await startWorker({
      config,
      target: host.target,
      logger: silentLogger,
      concurrency: 1,
      workerId: 'leaving',
    });
    await vi.waitFor(
      async () => {
        expect(await (await pipeline.queue.getJob(jobId))?.getState()).toBe('active');
        expect(await pipeline.redis.zcard(pipeline.keys.leases())).toBe(1);
      },
      { timeout: 30_000, interval: 100 },
    );

    const stopping = performance.now();
    await first.close();
    // Grace 1 s, then abort + KillSandbox: the 8 s step is not waited for.
    expect(performance.now() - stopping).toBeLessThan(5_000);
    const handedBack = await pipeline.queue.getJob(jobId);
    expect(['waiting', 'delayed', 'prioritized']).toContain(await handedBack?.getState());
    expect(handedBack?.attemptsMade).toBe(0);
    expect(await pipeline.redis.zcard(pipeline.keys.leases())).toBe(0);
    await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]), {
      timeout: 10_000,
      interval: 100,
    });
    expect(await pipeline.store.get(runId, 'long', 0)).toBeUndefined();

    const second = await startWorker({
      config: { ...config, worker: { ...config.worker, shutdownGraceS: 60 } },
      target: host.target,
      logger: silentLogger,
      concurrency: 1,
      workerId: 'staying',
    });
    try {
      const [result] = await collectResults(pipeline, runId, 1);
      expect(result).toMatchObject({ status: 'completed', worker_id: 'staying' });
      expect(result?.steps.map((s) => s.output.trim())).toEqual(['', 'done']);
      expect(result?.attempts).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('grades in a fresh sandbox from the image when fresh-eval is on', async () => {
    const config = configOf(testEnv({ RF_FRESH_EVAL: '1' }));
    const pipeline = openPipeline(config);
    pipelines.push(pipeline);
    const runId = 'fresh-eval';
    const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId });
    const picked = validated.episodes.filter(
      (e) => e.episode_id === 'pyutils__calc-add' || e.episode_id === 'pyutils__calc-regress',
    );
    expect(picked).toHaveLength(2);
    await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId, episodes: picked });
    const worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 2 });
    try {
      const results = await collectResults(pipeline, runId, 2);
      const byId = Object.fromEntries(results.map((r) => [r.episode_id, r]));
      expect(byId['pyutils__calc-add']).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
      expect(byId['pyutils__calc-add']?.report).toMatchObject({ patch_exists: true, patch_successfully_applied: true });
      expect(byId['pyutils__calc-add']?.patch).toContain('+    return a + b');
      expect(byId['pyutils__calc-regress']).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
      // Two sandboxes per episode: the replay one and the grading one.
      const created = (await worker.metrics.sandboxCreateSeconds.get()).values.find(
        (v) => v.metricName === 'rf_sandbox_create_seconds_count',
      );
      expect(created?.value).toBe(4);
    } finally {
      await worker.close();
    }
    await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]), {
      timeout: 10_000,
      interval: 100,
    });
  });
});
