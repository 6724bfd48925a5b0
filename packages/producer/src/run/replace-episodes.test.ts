/**
 * A forced episode whose job is finishing: it committed its result and is on its way to `completed` when the
 * force retracts that result. Without care it completes with no result left and nothing runs it again — the run
 * waits for that episode forever (integrity-chaos: "7 of 8 done for 150 s"). Real Redis and BullMQ.
 */
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rewardedResult } from '@rollout-fleet/shared/testing';
import { EpisodeSchema, ResultStore, createKeyspace, createRedis, type EpisodeJobData, type RedisClient } from '@rollout-fleet/shared';
import { submitRun } from './submit-run.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('replaceEpisodes: a forced job that finishes meanwhile', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;
  let queue: Queue<EpisodeJobData>;
  let worker: Worker<EpisodeJobData> | undefined;

  beforeAll(() => {
    redis = createRedis(redisUrl);
    queue = new Queue<EpisodeJobData>('episodes', { connection: { url: redisUrl }, prefix });
  });
  afterAll(async () => {
    await worker?.close();
    await queue.obliterate({ force: true });
    await queue.close();
    const found = await redis.keys(`rf:${prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  it('is enqueued again, so the episode gets its new result', async () => {
    const runId = `r-${randomUUID()}`;
    const episode = EpisodeSchema.parse({ run_id: runId, episode_id: 'e', instance_id: 'e', sandbox: { image: 'tiny' } });
    const store = new ResultStore(redis, keys);
    const ref = { runId, episodeId: 'e', sampleIndex: 0 };
    let runs = 0;
    let finish: () => void = () => undefined;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    // Each run commits in the generation it started in; the first then waits to finish until the test says so.
    worker = new Worker<EpisodeJobData>(
      'episodes',
      async (job) => {
        runs += 1;
        const { generation } = await store.state(ref);
        const result = rewardedResult({ run_id: runId, episode_id: 'e', instance_id: 'e', sample_index: 0, worker_id: 'w', finished_at: new Date().toISOString() }, 1);
        await store.commit(result, { generation, attemptsMade: job.attemptsMade });
        if (runs === 1) await finishing;
      },
      { connection: { url: redisUrl }, prefix },
    );
    await submitRun({ queue, redis, keys, runId, episodes: [episode] });
    await vi.waitFor(async () => expect(await store.get(runId, 'e', 0)).toBeDefined(), { timeout: 10_000, interval: 20 });

    // Forced while its job is still active, after the commit; the job then completes.
    const forcing = submitRun({ queue, redis, keys, runId, episodes: [episode], force: true });
    await vi.waitFor(async () => expect(await store.get(runId, 'e', 0)).toBeUndefined(), { timeout: 10_000, interval: 20 });
    finish();
    await forcing;

    await vi.waitFor(async () => {
      expect(runs).toBe(2);
      expect(await store.get(runId, 'e', 0)).toBeDefined();
    }, { timeout: 10_000, interval: 50 });
  });
});
