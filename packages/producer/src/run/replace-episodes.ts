/**
 * Runs episodes again (`submit --force`, `retry --failed`): each episode's current result is retracted — its
 * stream line and its counts go, and its generation moves on so an execution still running cannot commit —
 * and its job is replaced by one carrying the (possibly new) payload and the attempt history so far. The next
 * result then replaces the old one for every reader: a reader from the start sees one line per episode.
 *
 * The retract records the new job as the episode's pending re-run in the same Lua script, and it stays pending
 * until an execution begins or a result is stored (requeue-rerun.ts in @rollout-fleet/shared). That is what
 * makes a force safe against a job that is finishing and against this process dying: a job that had committed
 * before the retract and completes after it, at any time, is put back by the worker that completed it (or by
 * the fleet's sweep), and a job taken out here but never added back is added by the sweep. (It replaced a 2 s
 * watch of running jobs, which a job completing 2.1 s after the retract, or a producer killed meanwhile, beat.)
 *
 * Order matters. The payload is written to an existing job before the retract, so an execution that starts in
 * the new generation runs it. A job that is not running is then taken out and added again (fresh attempts); one
 * that is running stays: its worker sees the generation move (EpisodeWatch), stops and hands it back, and it
 * runs again with the new payload — or it had committed and is finishing, and the pending re-run puts it back.
 */
import type { Job, Queue } from 'bullmq';
import {
  ResultStore,
  jobIdFor,
  jobOptionsFor,
  type Episode,
  type EpisodeJobData,
  type JobPolicy,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { episodeJob, type EpisodeJob } from './episode-job.js';

export interface ReplaceEpisodesOptions {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  episodes: readonly Episode[];
  policy: JobPolicy;
  now?: () => Date;
}

export interface ReplaceSummary {
  /** Episodes enqueued again (new jobs). */
  enqueued: number;
  /** Episodes that were running: given their new payload, they restart on their worker (or, finishing, are put back). */
  restarted: number;
}

export async function replaceEpisodes(options: ReplaceEpisodesOptions): Promise<ReplaceSummary> {
  const { queue, redis, keys, runId } = options;
  const store = new ResultStore(redis, keys);
  const now = options.now ?? (() => new Date());
  const jobOptions = jobOptionsFor(options.policy);
  const summary: ReplaceSummary = { enqueued: 0, restarted: 0 };
  const ids = options.episodes.map((e) => jobIdFor(runId, e.episode_id, e.sample_index));
  if (ids.length > 0) await redis.sadd(keys.runJobs(runId), ...ids);
  const toAdd: EpisodeJob[] = [];
  for (const episode of options.episodes) {
    const ref = { runId, episodeId: episode.episode_id, sampleIndex: episode.sample_index };
    const previous = await store.get(runId, episode.episode_id, episode.sample_index);
    const add = episodeJob(runId, episode, { jobOptions, enqueuedAt: now(), attempts: previous?.attempts ?? [] });
    const job = await withPayload(queue, add.opts.jobId, add.data);
    await store.retract(ref, { rerun: JSON.stringify(add) });
    if (job && !(await removed(job))) {
      summary.restarted += 1;
      continue;
    }
    toAdd.push(add);
  }
  // A duplicate id is a no-op: a worker's sweep may have put one back already.
  if (toAdd.length > 0) await queue.addBulk(toAdd);
  summary.enqueued = toAdd.length;
  return summary;
}

/** BullMQ's code for a job whose key is gone (finished-errors.js). */
const MISSING_KEY = -1;

/**
 * Gives the episode's job, if there is one, the new payload. Another force or a worker's sweep may take the job
 * out and add it again between the look and the write: the write then misses, and the job is looked up again.
 */
async function withPayload(
  queue: Queue<EpisodeJobData>,
  id: string,
  data: EpisodeJobData,
): Promise<Job<EpisodeJobData> | undefined> {
  for (let look = 1; ; look += 1) {
    const job = await queue.getJob(id);
    if (!job) return undefined;
    try {
      await job.updateData(data);
      return job;
    } catch (err) {
      if (look >= 3 || (err as { code?: unknown }).code !== MISSING_KEY) throw err;
    }
  }
}

/** Removes a job that is not running; false when it is (BullMQ refuses to remove a locked job). */
async function removed(job: Job<EpisodeJobData>): Promise<boolean> {
  try {
    await job.remove();
    return true;
  } catch {
    return false;
  }
}
