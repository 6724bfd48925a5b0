/**
 * Enqueue a run idempotently. Job id = f(run, episode, sample); an episode whose result is already
 * stored, or whose job still exists in the queue, is skipped, so submitting the same run again enqueues
 * only what is missing. `force` runs the given episodes again: their results are retracted (the new result
 * replaces the old one for every reader, the attempt history is carried over) and their jobs replaced, running
 * ones included (replace-episodes.ts). Every sample's job id is registered before it is enqueued, which also fixes the
 * size of its RL group (all samples of one episode id), so the group can tell when it is complete.
 */
import type { Queue } from 'bullmq';
import type { RedisClient } from '@rollout-fleet/shared';
import {
  DEFAULT_JOB_POLICY,
  GroupStore,
  clearAnnouncement,
  recordRunSpecs,
  jobIdFor,
  jobNameFor,
  jobOptionsFor,
  type Episode,
  type EpisodeJobData,
  type JobPolicy,
  type Keyspace,
} from '@rollout-fleet/shared';
import { ResultStore } from '@rollout-fleet/shared';
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
  /** Episodes per Redis round trip / addBulk call. @defaultValue 500 */
  chunkSize?: number;
  policy?: JobPolicy;
  onProgress?: (progress: SubmitProgress) => void;
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
}

export async function submitRun(options: SubmitRunOptions): Promise<SubmitSummary> {
  const { queue, redis, keys, runId, episodes } = options;
  const chunkSize = options.chunkSize ?? 500;
  const jobOptions = jobOptionsFor(options.policy ?? DEFAULT_JOB_POLICY);
  const now = options.now ?? (() => new Date());
  const summary: SubmitSummary = { runId, total: episodes.length, enqueued: 0, skippedDone: 0, skippedQueued: 0 };
  const groups = new GroupStore(redis, keys);

  await redis
    .multi()
    .sadd(keys.runs(), runId)
    .hsetnx(keys.run(runId), 'created_at', now().toISOString())
    .exec();

  for (let start = 0; start < episodes.length; start += chunkSize) {
    const chunk = episodes.slice(start, start + chunkSize);
    const ids = chunk.map((e) => jobIdFor(runId, e.episode_id, e.sample_index));
    const resultKeys = chunk.map((e) => keys.result(runId, e.episode_id, e.sample_index));
    // Registered (and the run's total updated) before anything is enqueued, so `done >= total` never reads true
    // while jobs are still being added.
    await groups.registerJobs(runId, chunk.map((e, i) => ({ jobId: ids[i] as string, episodeId: e.episode_id })));
    await redis.hset(keys.run(runId), 'total', await redis.scard(keys.runJobs(runId)));
    if (options.force) {
      await groups.forgetSamples(runId, chunk.map((e) => ({ episodeId: e.episode_id, sampleIndex: e.sample_index })));
      await recordRunSpecs({ redis, keys, runId, episodes: chunk, ttlS: (options.policy ?? DEFAULT_JOB_POLICY).retentionS });
      const replaced = await replaceEpisodes({ queue, redis, keys, runId, episodes: chunk, policy: options.policy ?? DEFAULT_JOB_POLICY, now });
      summary.enqueued += replaced.enqueued + replaced.restarted;
      options.onProgress?.({ done: Math.min(start + chunk.length, episodes.length), total: episodes.length, enqueued: summary.enqueued, skipped: 0 });
      continue;
    }

    const probe = redis.pipeline();
    for (const [i, id] of ids.entries()) {
      probe.exists(resultKeys[i] as string);
      probe.exists(queue.toKey(id));
    }
    const answers = (await probe.exec()) ?? [];
    const toAdd: Array<{ name: string; data: EpisodeJobData; opts: ReturnType<typeof jobOptionsFor> & { jobId: string } }> = [];
    chunk.forEach((episode, i) => {
      const hasResult = answers[2 * i]?.[1] === 1;
      const hasJob = answers[2 * i + 1]?.[1] === 1;
      if (hasResult) summary.skippedDone += 1;
      else if (hasJob) summary.skippedQueued += 1;
      else
        toAdd.push({
          name: jobNameFor(episode.instance_id, episode.sample_index),
          data: { episode: { ...episode, run_id: runId }, enqueued_at: now().toISOString() },
          opts: { ...jobOptions, jobId: ids[i] as string },
        });
    });
    // The warm pool's lookahead reads each waiting job's sandbox spec from here (before the jobs can be taken).
    await recordRunSpecs({ redis, keys, runId, episodes: toAdd.map((job) => job.data.episode), ttlS: (options.policy ?? DEFAULT_JOB_POLICY).retentionS });
    if (toAdd.length > 0) await queue.addBulk(toAdd);
    summary.enqueued += toAdd.length;
    options.onProgress?.({
      done: Math.min(start + chunk.length, episodes.length),
      total: episodes.length,
      enqueued: summary.enqueued,
      skipped: summary.skippedDone + summary.skippedQueued,
    });
  }

  // What was announced for this run is now enqueued: its jobs speak for themselves.
  await clearAnnouncement({ redis, keys, runId });
  const total = await redis.scard(keys.runJobs(runId));
  await redis.hset(keys.run(runId), 'total', total);
  // The counters are kept by the commit and retract scripts; the recount (one Lua script, atomic with them)
  // only repairs a hash an older version or a person left wrong.
  if (options.force) await new ResultStore(redis, keys).recount(runId);
  return summary;
}
