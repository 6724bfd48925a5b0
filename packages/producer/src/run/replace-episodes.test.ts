/**
 * A forced episode whose job is finishing: it committed its result and is on its way to `completed` when the
 * force retracts that result. Without care it completes with no result left and nothing runs it again — the run
 * waits for that episode forever (integrity-chaos: "7 of 8 done for 150 s"). Also when it completes long after
 * the force returned, and when the producer dies between the retract and the enqueue. Real Redis and BullMQ.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EpisodeSchema,
  ResultStore,
  createKeyspace,
  createRedis,
  getRunStatus,
  requeuePendingReruns,
  type Episode,
  type EpisodeJobData,
  type RedisClient,
} from '@rollout-fleet/shared';
import { startStandInWorker, type StandInWorker } from '@rollout-fleet/test-kit/stand-in-worker';
import { submitRun } from './submit-run.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A promise and its resolver. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('replaceEpisodes: a forced job that finishes meanwhile', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;
  let queue: Queue<EpisodeJobData>;
  let store: ResultStore;
  let standIn: StandInWorker | undefined;

  beforeAll(() => {
    redis = createRedis(redisUrl);
    queue = new Queue<EpisodeJobData>('episodes', { connection: { url: redisUrl }, prefix });
    store = new ResultStore(redis, keys);
  });
  afterEach(async () => {
    await standIn?.close();
    standIn = undefined;
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    const found = await redis.keys(`rf:${prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  const episodeOf = (runId: string): Episode =>
    EpisodeSchema.parse({ run_id: runId, episode_id: 'e', instance_id: 'e', sandbox: { image: 'tiny' } });

  /** The episode has exactly one current result, counted once, one stream line, nothing pending, no live job. */
  async function expectOneResult(runId: string): Promise<void> {
    const label = `${runId}|e|0`;
    expect(await store.get(runId, 'e', 0)).toBeDefined();
    expect(Object.keys(await redis.hgetall(keys.resultIndex(runId)))).toEqual([label]);
    expect(await redis.xlen(keys.results(runId))).toBe(1);
    expect(await getRunStatus({ redis, keys, runId })).toMatchObject({ total: 1, done: 1, completed: 1 });
    expect(await redis.hexists(keys.reruns(), label)).toBe(0);
    expect(await queue.getJobState(label)).toBe('completed');
  }

  it('is enqueued again, so the episode gets its new result', async () => {
    const runId = `r-${randomUUID()}`;
    const episode = episodeOf(runId);
    const finishing = gate();
    // The first execution commits, then waits to finish until the test says so.
    standIn = startStandInWorker({
      redisUrl,
      prefix,
      redis,
      keys,
      hooks: { afterCommit: (e) => (e.serial === 1 ? finishing.opened : Promise.resolve()) },
    });
    await submitRun({ queue, redis, keys, runId, episodes: [episode] });
    await vi.waitFor(async () => expect(await store.get(runId, 'e', 0)).toBeDefined(), {
      timeout: 10_000,
      interval: 20,
    });

    // Forced while its job is still active, after the commit; the job then completes.
    const forcing = submitRun({ queue, redis, keys, runId, episodes: [episode], force: true });
    await vi.waitFor(async () => expect(await store.get(runId, 'e', 0)).toBeUndefined(), {
      timeout: 10_000,
      interval: 20,
    });
    finishing.open();
    await forcing;

    await vi.waitFor(
      async () => {
        expect(standIn?.executions.get(`${runId}|e|0`)).toBe(2);
        await expectOneResult(runId);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it('is enqueued again when it completes only after the force has returned (no window is long enough)', async () => {
    const runId = `r-${randomUUID()}`;
    const episode = episodeOf(runId);
    const finishing = gate();
    const committed = gate();
    standIn = startStandInWorker({
      redisUrl,
      prefix,
      redis,
      keys,
      hooks: {
        afterCommit: (e) => {
          if (e.serial !== 1) return Promise.resolve();
          committed.open();
          return finishing.opened;
        },
      },
    });
    await submitRun({ queue, redis, keys, runId, episodes: [episode] });
    await committed.opened;

    // The force returns while the execution that committed before it still holds its job.
    const forced = await submitRun({ queue, redis, keys, runId, episodes: [episode], force: true });
    expect(forced).toMatchObject({ enqueued: 1 });
    expect(await queue.getJobState(`${runId}|e|0`)).toBe('active');
    expect(await store.get(runId, 'e', 0)).toBeUndefined();
    // Then it completes, with its result retracted; its worker puts it back (no sweep runs in this test).
    const completed = new Promise<void>((resolve) => standIn?.worker.once('completed', () => resolve()));
    finishing.open();
    await completed;

    await vi.waitFor(
      async () => {
        expect(standIn?.executions.get(`${runId}|e|0`)).toBe(2);
        await expectOneResult(runId);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(standIn.requeueErrors).toEqual([]);
  });

  it('runs again when the producer dies between the retract and the enqueue', async () => {
    const runId = `r-${randomUUID()}`;
    const episode = episodeOf(runId);
    standIn = startStandInWorker({ redisUrl, prefix, redis, keys });
    await submitRun({ queue, redis, keys, runId, episodes: [episode] });
    await vi.waitFor(async () => expect(await queue.getJobState(`${runId}|e|0`)).toBe('completed'), {
      timeout: 10_000,
      interval: 20,
    });

    // A producer whose enqueue never happens: its promise is abandoned once it gets there (as if killed).
    const reached = gate();
    const dying = new Proxy(queue, {
      get(target, key) {
        if (key === 'addBulk')
          return () => {
            reached.open();
            return new Promise(() => undefined);
          };
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    void submitRun({ queue: dying, redis, keys, runId, episodes: [episode], force: true });
    await reached.opened;
    expect(await store.get(runId, 'e', 0)).toBeUndefined();
    expect(await queue.getJobState(`${runId}|e|0`)).toBe('unknown');

    // Any worker's sweep finds the episode with neither a result nor a job and puts its job back.
    expect(await requeuePendingReruns({ queue, redis, keys })).toBe(1);
    await vi.waitFor(
      async () => {
        expect(standIn?.executions.get(`${runId}|e|0`)).toBe(2);
        await expectOneResult(runId);
      },
      { timeout: 10_000, interval: 50 },
    );
    // A second sweep has nothing to do.
    expect(await requeuePendingReruns({ queue, redis, keys })).toBe(0);
  });
});
