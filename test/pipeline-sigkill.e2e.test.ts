/**
 * A worker process killed with SIGKILL mid-episode: another worker process takes the stalled job over and
 * finishes it, the dead worker's sandbox is reaped (its lease expires), the result is written exactly once
 * and no sandbox is left. Both workers are real `rollout-fleet worker` child processes using the test's
 * vefaas-local "as the cloud"; short lock, stalled-check, lease and reaper timings keep it to seconds.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { jobIdFor, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun } from '@rollout-fleet/producer';
import {
  cloudEnvFor,
  collectResults,
  configOf,
  episode,
  fleetSandboxes,
  leasesOf,
  openPipeline,
  resultsOf,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

const RUN = 'sigkill-e2e';
const EPISODE = 'slow';

describeWith([bwrapNeed()], 'SIGKILL of a worker mid-episode', () => {
  let host: Host;
  let pipeline: Pipeline;
  let workers: Array<ReturnType<typeof spawnWorker>> = [];

  beforeAll(async () => {
    host = await startHost();
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => stopChild(w, 'SIGKILL')));
    await pipeline?.close();
    await host?.close();
  });

  it('re-runs the job on another worker, reaps the orphan, writes one result and leaves no sandbox', async () => {
    const env = {
      ...testEnv({
        RF_WORKER_CONCURRENCY: '1',
        RF_LOCK_DURATION_MS: '4000',
        RF_STALLED_INTERVAL_MS: '1000',
        RF_LEASE_TTL_S: '4',
        RF_REAPER_INTERVAL_S: '1',
        RF_SHUTDOWN_GRACE_S: '5',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
      }),
      ...cloudEnvFor(host.handle),
    };
    const config = configOf(env);
    pipeline = openPipeline(config);
    // Step 2 runs long enough that the kill lands inside it; the re-run completes it normally.
    const slow = episode(RUN, EPISODE, {
      trajectory: [
        { name: 'execute_bash', arguments: { command: 'echo started' } },
        { name: 'execute_bash', arguments: { command: 'sleep 5 && echo slept' }, timeout_s: 60 },
        { name: 'execute_bash', arguments: { command: 'echo finished' } },
      ],
    });
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: [slow],
    });
    workers = [spawnWorker(env), spawnWorker(env)];

    // Wait until one worker holds the job, owns a leased sandbox and has finished step 1 (so step 2 runs).
    const jobId = jobIdFor(RUN, EPISODE, 0);
    const first = await vi.waitFor(
      async () => {
        const job = await pipeline.queue.getJob(jobId);
        expect(await job?.getState()).toBe('active');
        expect(job?.progress).toMatchObject({ step: 1, total: 3 });
        const [lease] = await leasesOf(pipeline);
        expect(lease?.sandbox).toBeTruthy();
        return { ticket: lease!.ticket!, sandboxId: lease!.sandbox!, workerId: lease!.worker!, jobId: lease!.job! };
      },
      { timeout: 40_000, interval: 100 },
    );
    expect(first.jobId).toBe(jobId);
    const victim = workers.find((w) => first.workerId.includes(`-${w.pid}-`));
    const survivor = workers.find((w) => w !== victim);
    expect(victim, `lease owner ${first.workerId} is one of the worker processes`).toBeDefined();
    expect(host.handle.liveSandboxes()).toBe(1);

    await stopChild(victim!, 'SIGKILL');
    expect(victim!.signalCode).toBe('SIGKILL');
    const killedAt = performance.now();
    // Its slot frees itself when Redis expires the lease (TTL 4 s), with no help from the dead process.
    await vi.waitFor(async () => expect(await pipeline.redis.zscore(pipeline.keys.leases(), first.ticket)).toBeNull(), {
      timeout: 10_000,
      interval: 50,
    });
    expect(performance.now() - killedAt).toBeLessThan(4_000 + 1_500);

    const [result] = (await collectResults(pipeline, RUN, 1)) as [EpisodeResult];
    expect(result).toMatchObject({ run_id: RUN, episode_id: EPISODE, status: 'completed', failure: null });
    expect(result.worker_id).not.toBe(first.workerId);
    expect(result.worker_id).toContain(`-${survivor!.pid}-`);
    expect(result.sandbox_id).not.toBe(first.sandboxId);
    expect(result.steps.map((s) => [s.exit_code, s.output.trim()])).toEqual([
      [0, 'started'],
      [0, 'slept'],
      [0, 'finished'],
    ]);

    // The dead worker's sandbox is killed by the survivor's reaper once its lease has expired.
    await vi.waitFor(
      async () => {
        expect((await fleetSandboxes(host, config)).map((s) => s.id)).not.toContain(first.sandboxId);
        expect(host.handle.liveSandboxes()).toBe(0);
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(await pipeline.redis.exists(pipeline.keys.lease(first.ticket))).toBe(0);

    // Exactly once: one stream entry, no duplicate commit, the job completed with a pointer to the result.
    const job = await vi.waitFor(
      async () => {
        const j = await pipeline.queue.getJob(jobId);
        expect(await j?.getState()).toBe('completed');
        return j!;
      },
      { timeout: 10_000 },
    );
    expect(job.returnvalue).toMatchObject({ result_key: pipeline.keys.result(RUN, EPISODE, 0), stored: true });
    expect(await resultsOf(pipeline, RUN)).toHaveLength(1);
    expect(await pipeline.redis.hgetall(pipeline.keys.run(RUN))).toMatchObject({
      total: '1',
      done: '1',
      completed: '1',
    });
    expect(Number((await pipeline.redis.hget(pipeline.keys.run(RUN), 'duplicates')) ?? 0)).toBe(0);

    // The survivor shuts down cleanly, and nothing of the fleet is left on the platform or in Redis.
    await stopChild(survivor!, 'SIGTERM');
    expect(survivor!.exitCode, survivor!.log()).toBe(0);
    await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]), {
      timeout: 15_000,
      interval: 100,
    });
    expect(await pipeline.redis.zcard(pipeline.keys.leases())).toBe(0);
  });
});
