import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  announceDemand,
  createRedis,
  getRunStatus,
  readDemand,
  specKey,
  type RedisClient,
  EpisodeSchema,
  ResultStore,
  createKeyspace,
  type Episode,
  type EpisodeJobData,
  type EpisodeResult,
} from '@rollout-fleet/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewardedResult } from '@rollout-fleet/test-kit/result-fixture';
import { cancelRun } from './cancel-run.js';
import { retryFailed } from './retry-failed.js';
import { runFinished, streamResults } from './stream-results.js';
import { submitRun } from './submit-run.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function episode(runId: string, id: string, sample = 0): Episode {
  return EpisodeSchema.parse({
    run_id: runId,
    episode_id: id,
    instance_id: id,
    sample_index: sample,
    sandbox: { image: 'tiny' },
  });
}

function resultFor(e: Episode, status: 'completed' | 'failed'): EpisodeResult {
  const { run_id, episode_id, instance_id, sample_index } = e;
  return rewardedResult(
    { run_id, episode_id, instance_id, sample_index, worker_id: 'test', finished_at: new Date().toISOString() },
    status === 'completed' ? 1 : null,
  );
}

describe('submitRun', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;
  let queue: Queue<EpisodeJobData>;

  beforeAll(() => {
    redis = createRedis(redisUrl);
    queue = new Queue<EpisodeJobData>('episodes', { connection: { url: redisUrl }, prefix });
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    const found = await redis.keys(`rf:${prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  it('enqueues every episode once, in chunks, reporting progress', async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = [0, 1, 2, 3, 4].map((i) => episode(runId, `e${i}`));
    const progress: number[] = [];
    const summary = await submitRun({
      queue,
      redis,
      keys,
      runId,
      episodes,
      chunkSize: 2,
      onProgress: (p) => progress.push(p.done),
    });
    expect(summary).toMatchObject({ total: 5, enqueued: 5, skippedDone: 0, skippedQueued: 0 });
    expect(progress).toEqual([2, 4, 5]);
    const job = await queue.getJob(`${runId}|e3|0`);
    expect(job?.name).toBe('e3#0');
    expect(job?.data.episode.episode_id).toBe('e3');
    expect(job?.opts.attempts).toBe(3);
    expect(await redis.hget(keys.run(runId), 'total')).toBe('5');
  });

  it("records each group's size (samples per episode) at submit, once however often the run is submitted", async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = ['a', 'b'].flatMap((id) => [0, 1, 2].map((sample) => episode(runId, id, sample)));
    await submitRun({ queue, redis, keys, runId, episodes });
    await submitRun({ queue, redis, keys, runId, episodes });
    await submitRun({ queue, redis, keys, runId, episodes: episodes.slice(0, 2), force: true });
    expect(await redis.hgetall(keys.groupSizes(runId))).toEqual({ a: '3', b: '3' });
    const status = await getRunStatus({ redis, keys, runId });
    expect(status).toMatchObject({ total: 6, groups: 2, groupsCompleted: 0 });
    const store = new ResultStore(redis, keys);
    for (const e of episodes.filter((e) => e.episode_id === 'a')) {
      // Forced samples run in their next generation.
      const { generation } = await store.state({ runId, episodeId: e.episode_id, sampleIndex: e.sample_index });
      await store.commit(resultFor(e, 'completed'), { generation, attemptsMade: 0 });
    }
    expect(await store.get(runId, 'a', 1)).toMatchObject({ group: { id: 'a', size: 3 } });
    expect(await getRunStatus({ redis, keys, runId })).toMatchObject({ groups: 2, groupsCompleted: 1 });
  });

  it('resumes: a second submission enqueues only what has neither a result nor a job', async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = [0, 1, 2, 3].map((i) => episode(runId, `e${i}`));
    await submitRun({ queue, redis, keys, runId, episodes: episodes.slice(0, 2) });
    const store = new ResultStore(redis, keys);
    await store.commit(resultFor(episodes[0] as Episode, 'completed'));
    await (await queue.getJob(`${runId}|e0|0`))?.remove();

    const again = await submitRun({ queue, redis, keys, runId, episodes });
    expect(again).toMatchObject({ enqueued: 2, skippedDone: 1, skippedQueued: 1 });
    expect(await queue.getJob(`${runId}|e0|0`)).toBeUndefined();
    expect(await redis.scard(keys.runJobs(runId))).toBe(4);

    const forced = await submitRun({ queue, redis, keys, runId, episodes: episodes.slice(0, 1), force: true });
    expect(forced.enqueued).toBe(1);
    expect(await store.get(runId, 'e0', 0)).toBeUndefined();
    expect(await redis.hget(keys.run(runId), 'done')).toBe('0');
  });

  it('an interrupted submit leaves the whole run registered and says how much is not enqueued; the same submit again finishes it', async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = [0, 1, 2, 3, 4, 5, 6].map((i) => episode(runId, `e${i}`));
    const stop = new AbortController();
    const first = await submitRun({
      queue,
      redis,
      keys,
      runId,
      episodes,
      chunkSize: 3,
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    expect(first).toMatchObject({ interrupted: true, cancelled: false, enqueued: 3, run: { total: 7, enqueued: 3 } });
    expect(await redis.hmget(keys.run(runId), 'total', 'not_enqueued')).toEqual(['7', '4']);
    expect(await redis.exists(keys.submitting(runId))).toBe(0);
    expect(await getRunStatus({ redis, keys, runId })).toMatchObject({
      total: 7,
      waiting: 3,
      notEnqueued: 4,
      submitting: false,
    });
    expect(await runFinished(redis, keys, runId)).toBe(false);

    const again = await submitRun({ queue, redis, keys, runId, episodes, chunkSize: 3 });
    expect(again).toMatchObject({ interrupted: false, enqueued: 4, skippedQueued: 3, run: { total: 7, enqueued: 7 } });
    expect(await redis.hget(keys.run(runId), 'not_enqueued')).toBeNull();
    expect(await getRunStatus({ redis, keys, runId })).toMatchObject({ total: 7, waiting: 7, notEnqueued: 0 });
  });

  it('refuses a cancelled run unless resume, which runs its cancelled episodes again; a cancel while submitting stops the submit', async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = [0, 1, 2].map((i) => episode(runId, `e${i}`));
    await submitRun({ queue, redis, keys, runId, episodes });
    await cancelRun({ queue, redis, keys, runId });
    await expect(submitRun({ queue, redis, keys, runId, episodes })).rejects.toMatchObject({ code: 'RUN_CANCELLED' });
    expect(await getRunStatus({ redis, keys, runId })).toMatchObject({ cancelled: true, waiting: 0, done: 3 });
    const resumed = await submitRun({ queue, redis, keys, runId, episodes, resume: true });
    expect(resumed).toMatchObject({ resumed: 3, enqueued: 3, skippedDone: 0 });
    expect(await getRunStatus({ redis, keys, runId })).toMatchObject({ cancelled: false, waiting: 3, done: 0 });
    expect(await redis.hlen(keys.parked(runId))).toBe(0);

    const other = `r-${randomUUID()}`;
    const more = [0, 1, 2, 3, 4, 5].map((i) => episode(other, `e${i}`));
    let cancelling: Promise<unknown> | undefined;
    const stopped = await submitRun({
      queue,
      redis,
      keys,
      runId: other,
      episodes: more,
      chunkSize: 2,
      onProgress: (p) => {
        if (p.done === 2) cancelling = cancelRun({ queue, redis, keys, runId: other });
      },
    });
    await cancelling;
    expect(stopped.cancelled).toBe(true);
    expect(stopped.enqueued).toBeLessThan(6);
    expect(await runFinished(redis, keys, other)).toBe(true);
  });

  it('refuses unknown runs in cancel and retry, with the closest run ids, and creates nothing', async () => {
    const runId = `known-${randomUUID().slice(0, 8)}`;
    await submitRun({ queue, redis, keys, runId, episodes: [episode(runId, 'e0')] });
    const typo = `${runId}x`;
    await expect(cancelRun({ queue, redis, keys, runId: typo })).rejects.toMatchObject({
      code: 'RUN_NOT_FOUND',
      message: `no run "${typo}"; did you mean "${runId}"?`,
      details: { didYouMean: [runId] },
    });
    await expect(retryFailed({ queue, redis, keys, runId: typo })).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    expect(await redis.exists(keys.run(typo))).toBe(0);
  });

  it("records each enqueued job's sandbox spec for the warm pool's lookahead, and retires the run's announcement", async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = [0, 1, 2].map((i) => episode(runId, `e${i}`));
    const key = specKey(episodes[0]!.sandbox, episodes[0]!.tools);
    await announceDemand({ redis, keys, runId, episodes });
    expect(await readDemand({ redis, keys, waitingJobIds: [] })).toEqual(new Map([[key, 3]]));
    await submitRun({ queue, redis, keys, runId, episodes });
    expect(await redis.exists(keys.announced(runId))).toBe(0);
    const waiting = (await queue.getRanges(['wait'], 0, 100, true)).filter((id) => id.startsWith(`${runId}|`));
    expect(waiting).toHaveLength(3);
    expect(await readDemand({ redis, keys, waitingJobIds: waiting })).toEqual(new Map([[key, 3]]));
    expect(JSON.parse((await redis.get(keys.spec(key)))!)).toMatchObject({
      sandbox: { image: 'tiny' },
      tools: episodes[0]!.tools,
    });
  });

  it('reports status with throughput and ETA, streams results, cancels and retries failures', async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = [0, 1, 2].map((i) => episode(runId, `e${i}`));
    await submitRun({ queue, redis, keys, runId, episodes });
    const store = new ResultStore(redis, keys);
    await store.commit(resultFor(episodes[0] as Episode, 'completed'));
    await store.commit(resultFor(episodes[1] as Episode, 'failed'));

    const status = await getRunStatus({ redis, keys, runId });
    expect(status).toMatchObject({
      total: 3,
      done: 2,
      completed: 1,
      failed: 1,
      resolved: 1,
      waiting: 1,
      resolvedRate: 1,
    });
    expect(status.throughputPerS).toBeGreaterThan(0);
    expect(status.etaS).not.toBeNull();

    const streamed: string[] = [];
    for await (const item of streamResults({ redis, keys, runId })) streamed.push(item.result.episode_id);
    expect(streamed).toEqual(['e0', 'e1']);

    const followed: string[] = [];
    const following = (async () => {
      for await (const item of streamResults({ redis, keys, runId, follow: true, after: '0' }))
        followed.push(item.result.episode_id);
    })();
    await store.commit(resultFor(episodes[2] as Episode, 'completed'));
    await following;
    expect(followed).toEqual(['e0', 'e1', 'e2']);

    const retried = await retryFailed({ queue, redis, keys, runId });
    expect(retried).toEqual({ retried: 1, missingPayload: 0, resumed: false, cancelled: 0 });
    expect(await store.get(runId, 'e1', 0)).toBeUndefined();
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({ done: '2', failed: '0', completed: '2' });

    const cancelled = await cancelRun({ queue, redis, keys, runId });
    expect(cancelled.removed).toBeGreaterThanOrEqual(1);
    expect(await queue.getJob(`${runId}|e1|0`)).toBeUndefined();
    expect((await getRunStatus({ redis, keys, runId })).cancelled).toBe(true);
  });

  // Last: its 130 waiting jobs would crowd the first page of the queue the tests above read.
  it('enqueues a short first chunk, so workers start before the whole first chunk is added', async () => {
    const runId = `r-${randomUUID()}`;
    const episodes = Array.from({ length: 130 }, (_, i) => episode(runId, `e${i}`));
    const progress: number[] = [];
    const summary = await submitRun({ queue, redis, keys, runId, episodes, onProgress: (p) => progress.push(p.done) });
    expect(summary).toMatchObject({ total: 130, enqueued: 130 });
    expect(progress).toEqual([64, 130]);
    expect(await redis.hget(keys.run(runId), 'total')).toBe('130');
  });
});
