/**
 * Exactly one result for every finished job (issue #9 item 3), with real BullMQ on real Redis: a job whose
 * worker died more often than `maxStalledCount` is failed by BullMQ without calling the processor, and still
 * gets a failed result with a code (JOB_STALLED); a failed job left without a result (its failure commit threw,
 * or the worker died right after) gets one from the reconciler; the run's counters reach its total.
 */
import { randomUUID } from 'node:crypto';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EpisodeSchema,
  ResultStore,
  createKeyspace,
  createLogger,
  createRedis,
  jobIdFor,
  requeueRerun,
  type EpisodeJobData,
  type PendingRerun,
  type RedisClient,
} from '@rollout-fleet/shared';
import { reconcileFailedJobs } from './reconcile-failed-jobs.js';
import { settleFailedJob } from './settle-failed-job.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger({ level: 'silent', format: 'json' });

describe('failed jobs always get a result', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;
  let queue: Queue<EpisodeJobData>;
  let store: ResultStore;
  const connections: RedisClient[] = [];
  const workers: Worker<EpisodeJobData>[] = [];

  beforeAll(() => {
    redis = createRedis(redisUrl);
    store = new ResultStore(redis, keys);
    queue = new Queue<EpisodeJobData>('episodes', { connection: createRedis(redisUrl), prefix });
  });
  afterAll(async () => {
    for (const w of workers) await w.close(true);
    await queue.obliterate({ force: true });
    await queue.close();
    for (const c of connections) c.disconnect();
    const found = await redis.keys(`*${prefix}*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  function worker(processor: (job: Job<EpisodeJobData>) => Promise<unknown>): Worker<EpisodeJobData> {
    const connection = createRedis(redisUrl, { role: 'blocking' });
    connections.push(connection);
    const w = new Worker<EpisodeJobData>('episodes', processor, {
      connection,
      prefix,
      lockDuration: 400,
      stalledInterval: 200,
      maxStalledCount: 0,
    });
    workers.push(w);
    return w;
  }

  async function enqueue(runId: string, id: string): Promise<string> {
    const episode = EpisodeSchema.parse({ run_id: runId, episode_id: id, instance_id: id, sandbox: { image: 'tiny' } });
    const jobId = jobIdFor(runId, id, 0);
    await redis.sadd(keys.runJobs(runId), jobId);
    await redis.hset(keys.run(runId), 'total', 1);
    await queue.add('ep', { episode, enqueued_at: new Date().toISOString() }, { jobId, attempts: 3 });
    return jobId;
  }

  it('a job that stalled past maxStalledCount (failed without the processor) gets a JOB_STALLED result; counters reach the total', async () => {
    const runId = `r-${randomUUID()}`;
    let hung!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const dying = worker(() => {
      started();
      return new Promise<void>((resolve) => (hung = resolve));
    });
    const jobId = await enqueue(runId, 'e1');
    await running;
    // The worker dies: its lock is no longer renewed, the job stays active until the lock expires.
    await dying.close(true);
    const called = vi.fn(async () => 'ran');
    const survivor = worker(called);
    const settled: string[] = [];
    survivor.on('failed', (job, err) => {
      if (job) void settleFailedJob({ results: store, workerId: 'survivor' }, job, err).then((s) => settled.push(s));
    });
    await vi.waitFor(() => expect(settled).toEqual(['settled']), { timeout: 15_000, interval: 50 });
    hung();
    expect(called).not.toHaveBeenCalled();
    expect(await queue.getJobState(jobId)).toBe('failed');
    const result = await store.get(runId, 'e1', 0);
    expect(result).toMatchObject({ status: 'failed', reward: null, failure: { code: 'JOB_STALLED', class: 'infra' } });
    expect(await redis.hmget(keys.run(runId), 'done', 'total')).toEqual(['1', '1']);
    // A second settlement (another worker's failed event, the reconciler) writes nothing more.
    expect(await settleFailedJob({ results: store, workerId: 'again' }, (await queue.getJob(jobId))!)).toBe(
      'has-result',
    );
    await survivor.close(true);
  });

  it('the reconciler writes the result of a failed job that has none (its failure commit threw), once', async () => {
    const runId = `r-${randomUUID()}`;
    // A processor whose failure was never written (standing in for a commit that threw, then a dead worker).
    const w = worker(async () => {
      throw new Error('redis went away while committing');
    });
    const jobId = await enqueue(runId, 'e1');
    await vi.waitFor(async () => expect(await queue.getJobState(jobId)).toBe('failed'), {
      timeout: 15_000,
      interval: 50,
    });
    await w.close();
    expect(await store.get(runId, 'e1', 0)).toBeUndefined();
    const o = { queue, redis, keys, results: store, logger, workerId: 'reconciler' };
    expect(await reconcileFailedJobs(o)).toBe(1);
    expect(await store.get(runId, 'e1', 0)).toMatchObject({
      status: 'failed',
      reward: null,
      failure: { code: 'INTERNAL', class: 'infra' },
    });
    expect(await reconcileFailedJobs(o)).toBe(0);
    expect(await redis.hmget(keys.run(runId), 'done', 'failed')).toEqual(['1', '1']);
  });

  it('a late settlement of a job that failed before a force whose re-run has begun stores nothing in the new generation', async () => {
    const runId = `r-${randomUUID()}`;
    const ref = { runId, episodeId: 'e1', sampleIndex: 0 };
    const w = worker(async () => {
      throw new UnrecoverableError('failed in generation 0');
    });
    const jobId = await enqueue(runId, 'e1');
    await vi.waitFor(async () => expect(await queue.getJobState(jobId)).toBe('failed'), {
      timeout: 15_000,
      interval: 50,
    });
    await w.close();
    // The failed event's settlement is slow (a loaded worker): between its look at the job and its commit, the
    // episode is forced and the forced re-run begins on another worker.
    const job = (await queue.getJob(jobId))!;
    const state = job.getState.bind(job);
    job.getState = async () => {
      const seen = await state();
      // The force as replaceEpisodes does it (retract with the pending re-run, the failed job out, the new one in),
      // then a worker takes the new job: its execution begins.
      const rerun: PendingRerun = { name: 'ep', data: job.data, opts: { jobId, attempts: 3 } };
      await store.retract(ref, { rerun: JSON.stringify(rerun) });
      await queue.remove(jobId);
      await queue.add(rerun.name, rerun.data, rerun.opts);
      await store.begin(ref, String((await queue.getJob(jobId))!.timestamp));
      return seen;
    };
    expect(await settleFailedJob({ results: store, workerId: 'late' }, job)).not.toBe('settled');
    // The forced generation's result is the re-run's to write: the old failure is not stored in its place.
    expect(await store.get(runId, 'e1', 0)).toBeUndefined();
    expect((await store.state(ref)).generation).toBe(1);
    await queue.remove(jobId);
  });

  it('a job that failed in the generation before a force is not settled: its pending re-run puts it back', async () => {
    const runId = `r-${randomUUID()}`;
    let release!: () => void;
    let failing!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (failing = resolve));
    // Fails for good (UnrecoverableError) once the test has forced the episode meanwhile; runs fine after.
    let runs = 0;
    const w = worker(async (job) => {
      runs += 1;
      if (runs > 1) return 'ran';
      failing();
      await held;
      throw new UnrecoverableError(`failed in generation 0 (${job.id ?? ''})`);
    });
    const settled: string[] = [];
    w.on('failed', (job, err) => {
      if (job) void settleFailedJob({ results: store, workerId: 'w' }, job, err).then((s) => settled.push(s));
    });
    const jobId = await enqueue(runId, 'e1');
    await reached;
    const job = (await queue.getJob(jobId))!;
    const rerun: PendingRerun = { name: 'ep', data: job.data, opts: { jobId, attempts: 3 } };
    await store.retract({ runId, episodeId: 'e1', sampleIndex: 0 }, { rerun: JSON.stringify(rerun) });
    release();
    await vi.waitFor(() => expect(settled).toEqual(['has-result']), { timeout: 15_000, interval: 50 });
    expect(await store.get(runId, 'e1', 0)).toBeUndefined();
    // The reconciler does not settle it either; the failed-job hand-off (or the sweep) runs it again.
    expect(await reconcileFailedJobs({ queue, redis, keys, results: store, logger, workerId: 'reconciler' })).toBe(0);
    expect(await requeueRerun({ queue, redis, keys }, jobId)).toBe('queued');
    await vi.waitFor(() => expect(runs).toBe(2), { timeout: 15_000, interval: 50 });
    await w.close();
  });
});
