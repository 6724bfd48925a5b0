/**
 * Enqueue a run idempotently. Job id = f(run, episode, sample); an episode whose result is already
 * stored, or whose job still exists in the queue, is skipped, so submitting the same run again enqueues
 * only what is missing. `force` runs the given episodes again: their results are retracted (the new result
 * replaces the old one for every reader, the attempt history is carried over) and their jobs replaced, running
 * ones included (replace-episodes.ts).
 *
 * Two passes, so the run tells the truth while it is being enqueued and after an interrupted submit:
 * 1. plan: every sample's job id is registered (which fixes the run's total and the size of each RL group)
 *    and what is missing is worked out — before anything is enqueued, so `done >= total` never reads true
 *    while jobs are still being added, and the run hash says how many are not in the queue yet
 *    (`not_enqueued`);
 * 2. enqueue, chunk by chunk, counting `not_enqueued` down, with a `submitting` key (TTL, refreshed per
 *    chunk) saying a submit is at work. An abort (`signal`, the CLI's Ctrl-C) stops between chunks; a crash
 *    stops anywhere. Either way the run shows "enqueued N of M", and the same submit again enqueues the rest.
 *
 * A cancelled run is refused (RUN_CANCELLED) unless `resume`: then its flag is cleared and the given episodes
 * whose result is CANCELLED run again, alongside whatever is missing. A cancel while the submit runs stops it
 * after the current chunk (`cancelled`).
 */
import type { Queue } from 'bullmq';
import {
  DEFAULT_JOB_POLICY,
  GroupStore,
  ResultStore,
  RolloutError,
  clearAnnouncement,
  recordRunSpecs,
  jobIdFor,
  jobOptionsFor,
  parseResultValue,
  type Episode,
  type EpisodeJobData,
  type JobPolicy,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { episodeJob, type EpisodeJob } from './episode-job.js';
import { replaceEpisodes } from './replace-episodes.js';

export interface SubmitProgress {
  /** Episodes examined so far. */
  done: number;
  total: number;
  enqueued: number;
  skipped: number;
}

export interface SubmitRunOptions {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  episodes: readonly Episode[];
  /** Re-run episodes that already have a result or a job. @defaultValue false */
  force?: boolean;
  /** Submit into a cancelled run: clear its cancel flag and run its CANCELLED episodes again. @defaultValue false */
  resume?: boolean;
  /** Episodes per addBulk call (the first call takes at most 64, so workers start sooner). @defaultValue 500 */
  chunkSize?: number;
  policy?: JobPolicy;
  onProgress?: (progress: SubmitProgress) => void;
  /**
   * The instance ids of the SWE-bench dataset the episodes come from (ValidationResult.datasetInstanceIds): kept
   * with the run (added to what earlier submits kept) so its SWE-bench run report counts the whole dataset.
   */
  datasetInstanceIds?: readonly string[];
  /** Stops enqueueing between two chunks (the summary then says `interrupted`); what was enqueued stays. */
  signal?: AbortSignal;
  now?: () => Date;
}

export interface SubmitSummary {
  runId: string;
  total: number;
  enqueued: number;
  /** Already had a stored result (and were not forced). */
  skippedDone: number;
  /** Already had a job waiting, active, delayed or failed-without-result in the queue. */
  skippedQueued: number;
  /** Cancelled episodes run again (with `resume`). */
  resumed: number;
  /** The signal (or a cancel of the run) stopped the submit before everything was enqueued. */
  interrupted: boolean;
  /** The run was cancelled while this submit was enqueueing: it stopped there (the rest is never enqueued). */
  cancelled: boolean;
  /** The run's jobs (all submissions) and how many of them are in the queue or done. */
  run: { total: number; enqueued: number };
}

/** How long the `submitting` marker outlives the last chunk of a submit that died without a word. */
const SUBMITTING_TTL_MS = 30_000;

interface ChunkPlan {
  size: number;
  toAdd: EpisodeJob[];
  /** Forced or resumed: replaced (results retracted, jobs re-added or restarted). */
  toReplace: Episode[];
  skippedDone: number;
  skippedQueued: number;
}

export async function submitRun(options: SubmitRunOptions): Promise<SubmitSummary> {
  const { redis, keys, runId, episodes } = options;
  const chunkSize = options.chunkSize ?? 500;
  const policy = options.policy ?? DEFAULT_JOB_POLICY;
  const now = options.now ?? (() => new Date());
  const summary: SubmitSummary = {
    runId,
    total: episodes.length,
    enqueued: 0,
    skippedDone: 0,
    skippedQueued: 0,
    resumed: 0,
    interrupted: false,
    cancelled: false,
    run: { total: 0, enqueued: 0 },
  };

  await redis.multi().sadd(keys.runs(), runId).hsetnx(keys.run(runId), 'created_at', now().toISOString()).exec();
  await recordDataset(redis, keys.runDataset(runId), options.datasetInstanceIds ?? [], policy.retentionS);
  if ((await redis.hget(keys.run(runId), 'cancelled')) === '1') {
    if (!options.resume) {
      throw new RolloutError(
        'RUN_CANCELLED',
        `run ${runId} was cancelled; nothing was enqueued (submit again with --resume to run it again)`,
        { details: { runId } },
      );
    }
    await redis.hdel(keys.run(runId), 'cancelled');
  }

  // From here on the run says a submit is at work and how much of its total is not in the queue yet: the total
  // grows as chunks are registered, never ahead of not_enqueued, so `done >= total` cannot read true meanwhile.
  await redis
    .multi()
    .hset(keys.run(runId), 'not_enqueued', 0)
    .set(keys.submitting(runId), '1', 'PX', SUBMITTING_TTL_MS)
    .exec();
  let examined = 0;
  try {
    // Every chunk is planned at once (their round trips overlap on the connection), then counted in one step:
    // the run's total and not_enqueued move together, after every job id is registered, before any is enqueued.
    const plans = await Promise.all(
      chunkBounds(episodes.length, chunkSize).map(([start, end]) =>
        planChunk(options, episodes.slice(start, end), now),
      ),
    );
    const total = await redis.scard(keys.runJobs(runId));
    await redis
      .multi()
      .hincrby(
        keys.run(runId),
        'not_enqueued',
        plans.reduce((sum, plan) => sum + plan.toAdd.length + plan.toReplace.length, 0),
      )
      .hset(keys.run(runId), 'total', total)
      .pexpire(keys.submitting(runId), SUBMITTING_TTL_MS)
      .exec();
    for (const plan of plans) {
      if (options.signal?.aborted) {
        summary.interrupted = true;
        break;
      }
      const added = await enqueueChunk(options, plan, policy, now);
      summary.enqueued += added;
      summary.resumed += options.resume && !options.force ? plan.toReplace.length : 0;
      summary.skippedDone += plan.skippedDone;
      summary.skippedQueued += plan.skippedQueued;
      examined += plan.size;
      const answers = await redis
        .multi()
        .hincrby(keys.run(runId), 'not_enqueued', -(plan.toAdd.length + plan.toReplace.length))
        .pexpire(keys.submitting(runId), SUBMITTING_TTL_MS)
        .hget(keys.run(runId), 'cancelled')
        .exec();
      options.onProgress?.({
        done: examined,
        total: episodes.length,
        enqueued: summary.enqueued,
        skipped: summary.skippedDone + summary.skippedQueued,
      });
      // A cancel while this submit runs: what is enqueued is being cancelled; enqueueing more would only add
      // jobs that end CANCELLED.
      if (answers?.[2]?.[1] === '1' && examined < episodes.length) {
        summary.interrupted = true;
        summary.cancelled = true;
        break;
      }
    }
  } finally {
    await redis.del(keys.submitting(runId));
  }

  const [total, notEnqueued] = await Promise.all([
    redis.scard(keys.runJobs(runId)),
    redis.hget(keys.run(runId), 'not_enqueued'),
  ]);
  summary.run = { total, enqueued: total - Math.max(0, Number(notEnqueued ?? 0)) };
  if (summary.interrupted) return summary;
  // What was announced for this run is now enqueued: its jobs speak for themselves.
  await clearAnnouncement({ redis, keys, runId });
  await redis.multi().hset(keys.run(runId), 'total', total).hdel(keys.run(runId), 'not_enqueued').exec();
  summary.run.enqueued = total;
  // The counters are kept by the commit and retract scripts; the recount (one Lua script, atomic with them)
  // only repairs a hash an older version or a person left wrong.
  if (options.force || summary.resumed > 0) await new ResultStore(redis, keys).recount(runId);
  return summary;
}

async function recordDataset(redis: RedisClient, key: string, ids: readonly string[], ttlS: number): Promise<void> {
  if (ids.length === 0) return;
  const multi = redis.multi();
  for (const [start, end] of chunkBounds(ids.length, 1000)) multi.sadd(key, ...ids.slice(start, end));
  await multi.expire(key, Math.max(1, Math.round(ttlS))).exec();
}

/**
 * The first chunk is small, so workers get the run's first jobs after one short addBulk instead of one of a whole
 * chunk (~70 ms for 500 jobs); the rest go `chunkSize` at a time.
 */
const FIRST_CHUNK = 64;

function chunkBounds(length: number, chunkSize: number): Array<[number, number]> {
  const bounds: Array<[number, number]> = [];
  for (let start = 0; start < length;) {
    const end = Math.min(length, start + (start === 0 ? Math.min(FIRST_CHUNK, chunkSize) : chunkSize));
    bounds.push([start, end]);
    start = end;
  }
  return bounds;
}

/** Registers the chunk's job ids (fixing the run's total and its groups' sizes) and works out what to enqueue. */
async function planChunk(options: SubmitRunOptions, chunk: readonly Episode[], now: () => Date): Promise<ChunkPlan> {
  const { queue, redis, keys, runId } = options;
  const ids = chunk.map((e) => jobIdFor(runId, e.episode_id, e.sample_index));
  await new GroupStore(redis, keys).registerJobs(
    runId,
    chunk.map((e, i) => ({ jobId: ids[i] as string, episodeId: e.episode_id })),
  );
  const plan: ChunkPlan = { size: chunk.length, toAdd: [], toReplace: [], skippedDone: 0, skippedQueued: 0 };
  if (options.force) {
    plan.toReplace = [...chunk];
    return plan;
  }
  const probe = redis.pipeline();
  for (const [i, e] of chunk.entries()) {
    // With resume the result itself is read: a CANCELLED one runs again.
    if (options.resume) probe.getBuffer(keys.result(runId, e.episode_id, e.sample_index));
    else probe.exists(keys.result(runId, e.episode_id, e.sample_index));
    probe.exists(queue.toKey(ids[i] as string));
  }
  const answers = (await probe.exec()) ?? [];
  const jobOptions = jobOptionsFor(options.policy ?? DEFAULT_JOB_POLICY);
  chunk.forEach((episode, i) => {
    const result = answers[2 * i]?.[1];
    const hasResult = result === 1 || Buffer.isBuffer(result);
    const hasJob = answers[2 * i + 1]?.[1] === 1;
    if (Buffer.isBuffer(result) && wasCancelled(result)) plan.toReplace.push(episode);
    else if (hasResult) plan.skippedDone += 1;
    else if (hasJob) plan.skippedQueued += 1;
    else plan.toAdd.push(episodeJob(runId, episode, { jobOptions, enqueuedAt: now() }));
  });
  return plan;
}

async function enqueueChunk(
  options: SubmitRunOptions,
  plan: ChunkPlan,
  policy: JobPolicy,
  now: () => Date,
): Promise<number> {
  const { queue, redis, keys, runId } = options;
  // The warm pool's lookahead reads each waiting job's sandbox spec from here (before the jobs can be taken).
  await recordRunSpecs({
    redis,
    keys,
    runId,
    episodes: [...plan.toAdd.map((job) => job.data.episode), ...plan.toReplace],
    ttlS: policy.retentionS,
  });
  if (plan.toAdd.length > 0) await queue.addBulk(plan.toAdd);
  if (plan.toReplace.length === 0) return plan.toAdd.length;
  // Each replaced sample leaves its RL group in the retract script itself (result-store.ts), so the group waits.
  const replaced = await replaceEpisodes({ queue, redis, keys, runId, episodes: plan.toReplace, policy, now });
  // A resumed episode's payload is in its new job now, not parked.
  await redis.hdel(keys.parked(runId), ...plan.toReplace.map((e) => jobIdFor(runId, e.episode_id, e.sample_index)));
  return plan.toAdd.length + replaced.enqueued + replaced.restarted;
}

function wasCancelled(stored: Buffer): boolean {
  try {
    return (parseResultValue(stored) as { failure?: { code?: string } | null }).failure?.code === 'CANCELLED';
  } catch {
    return false;
  }
}
