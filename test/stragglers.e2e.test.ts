/**
 * Straggler control end to end (a real worker, vefaas-local with emulated sandboxes, real Redis): one
 * episode's sandbox turns slow (vefaas-local's per-instance slowness) while the rest of the run finishes; in
 * the run's tail the worker starts a backup in another sandbox, the backup's result is committed exactly once,
 * the slow twin is stopped and its sandbox killed, and the result lists both attempts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { jobIdFor, type Episode, type EpisodeResult, type RolloutError } from '@rollout-fleet/shared';
import { submitRun } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  collectResults,
  configOf,
  episode,
  leasesOf,
  openPipeline,
  resultsOf,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

describe('straggler backups', () => {
  let host: Host;
  let pipeline: Pipeline | undefined;
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
  });
  afterEach(async () => {
    await worker?.close();
    await pipeline?.close();
  });
  afterAll(async () => {
    await host?.close();
  });

  it("backs up a straggler in the run's tail: the backup commits once, the twin is stopped and its sandbox killed", async () => {
    const config = configOf(testEnv({ RF_WORKER_CONCURRENCY: '4', RF_STRAGGLER_FACTOR: '2' }));
    pipeline = openPipeline(config);
    const p = pipeline;
    const runId = 'tail';
    // Every episode sleeps 2 s at step 2 (emulated sandboxes sleep without a process): a normal episode takes
    // about 2 s, and the test has those 2 s to slow the straggler's sandbox once its step 1 is done.
    const trajectory = (first: string) => [
      { name: 'execute_bash', arguments: { command: `echo ${first}` } },
      { name: 'execute_bash', arguments: { command: 'sleep 2' } },
      { name: 'execute_bash', arguments: { command: 'echo three' } },
    ];
    const quick: Episode[] = Array.from({ length: 12 }, (_, i) =>
      episode(runId, `q${i}`, { sandbox: { image: 'python' }, tools: ['execute_bash'], trajectory: trajectory('q') }),
    );
    const slow = episode(runId, 'slow', {
      sandbox: { image: 'python' },
      tools: ['execute_bash'],
      trajectory: trajectory('one'),
    });
    await submitRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId, episodes: [slow, ...quick] });
    worker = await startWorker({ config, target: host.target, logger: silentLogger });

    // Once the slow episode has done its first step, its sandbox turns slow: every later request waits a minute.
    const slowJob = jobIdFor(runId, 'slow', 0);
    const slowSandbox = await vi.waitFor(
      async () => {
        const job = await p.queue.getJob(slowJob);
        expect((job?.progress as { step?: number } | undefined)?.step).toBeGreaterThanOrEqual(1);
        const lease = (await leasesOf(p)).find((l) => l.job === slowJob && l.role === 'main');
        expect(lease?.sandbox).toBeTruthy();
        return lease!.sandbox!;
      },
      { timeout: 30_000, interval: 20 },
    );
    const slowed = await fetch(`${host.handle.controlPlaneUrl}/_admin/sandboxes/${slowSandbox}/slow`, {
      method: 'POST',
      body: JSON.stringify({ latencyMs: 60_000 }),
    });
    expect(slowed.status).toBe(200);

    const results = await collectResults(p, runId, 13);
    const result = results.find((r) => r.episode_id === 'slow') as EpisodeResult;
    expect(result).toMatchObject({ status: 'completed', failure: null });
    expect(result.steps.map((s) => s.output.trim())).toEqual(['one', '', 'three']);
    expect(result.attempts).toHaveLength(2);
    const [primary, backup] = result.attempts;
    expect(primary).toMatchObject({
      attempt: 1,
      sandbox_id: slowSandbox,
      failure: { code: 'ATTEMPT_SUPERSEDED', class: 'infra' },
    });
    expect(primary?.backup).toBeUndefined();
    expect(backup).toMatchObject({ attempt: 1, backup: true, failure: null });
    expect(backup?.sandbox_id).toBe(result.sandbox_id);
    expect(backup?.sandbox_id).not.toBe(slowSandbox);
    // The whole run took far less than the slow sandbox's minute.
    expect(Date.parse(result.finished_at) - Date.parse(primary!.started_at)).toBeLessThan(40_000);

    // Exactly once: one stream entry per episode, no duplicate commit, one backup spent of the budget.
    expect(await resultsOf(p, runId)).toHaveLength(13);
    expect(await p.redis.hgetall(p.keys.run(runId))).toMatchObject({
      total: '13',
      done: '13',
      completed: '13',
      backups: '1',
    });
    expect(Number((await p.redis.hget(p.keys.run(runId), 'duplicates')) ?? 0)).toBe(0);
    // The twin's sandbox is killed.
    await vi.waitFor(
      async () => {
        const status = await host.target.vefaas
          .describeSandbox({ FunctionId: host.target.functionId, SandboxId: slowSandbox })
          .then(
            (d) => d.Status,
            (err: RolloutError) => (err.code === 'VEFAAS_NOT_FOUND' ? 'gone' : 'error'),
          );
        expect(['gone', 'Terminating']).toContain(status);
      },
      { timeout: 10_000, interval: 50 },
    );
    const job = await p.queue.getJob(slowJob);
    expect(await job?.getState()).toBe('completed');
    expect(job?.attemptsMade).toBe(1);
  });
});
