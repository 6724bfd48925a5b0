/**
 * Runs episodes again (`submit --force`, `retry --failed`): each episode's current result is retracted — its
 * stream line and its counts go, and its generation moves on so an execution still running cannot commit —
 * and its job is replaced by one carrying the (possibly new) payload and the attempt history so far. The next
 * result then replaces the old one for every reader: a reader from the start sees one line per episode.
 *
 * Order matters. A job that is not running is retracted first and re-added after, so no worker can take the
 * new job while the old result still stands (it would return that result and complete). A running job gets its
 * new payload first and is retracted after; the worker running it sees the generation move (EpisodeWatch),
 * stops and hands the job back, and it runs again with the new payload.
 */
import type { Job, Queue } from 'bullmq';
import {
  ResultStore,
  jobIdFor,
  jobNameFor,
  jobOptionsFor,
  type Episode,
  type EpisodeJobData,
  type JobPolicy,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';

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
  /** Episodes that were running: given their new payload, they restart on their worker. */
  restarted: number;
}

const REMOVABLE = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed', 'unknown']);

export async function replaceEpisodes(options: ReplaceEpisodesOptions): Promise<ReplaceSummary> {
  const { queue, redis, keys, runId } = options;
  const store = new ResultStore(redis, keys);
  const now = options.now ?? (() => new Date());
  const jobOptions = jobOptionsFor(options.policy);
  const summary: ReplaceSummary = { enqueued: 0, restarted: 0 };
  const toAdd: Array<{ name: string; data: EpisodeJobData; opts: ReturnType<typeof jobOptionsFor> & { jobId: string } }> = [];
  for (const episode of options.episodes) {
    const ref = { runId, episodeId: episode.episode_id, sampleIndex: episode.sample_index };
    const id = jobIdFor(runId, episode.episode_id, episode.sample_index);
    const previous = await store.get(runId, episode.episode_id, episode.sample_index);
    const data: EpisodeJobData = { episode: { ...episode, run_id: runId }, enqueued_at: now().toISOString(), attempts: previous?.attempts ?? [] };
    const job = await queue.getJob(id);
    const state = job ? await job.getState() : 'missing';
    if (job && !REMOVABLE.has(state)) {
      await job.updateData(data);
      await store.retract(ref);
      summary.restarted += 1;
      continue;
    }
    await store.retract(ref);
    if (job && !(await removed(job))) {
      // It started between the two looks: it runs in the old generation, so it will stop and re-run with this.
      await job.updateData(data);
      summary.restarted += 1;
      continue;
    }
    toAdd.push({ name: jobNameFor(episode.instance_id, episode.sample_index), data, opts: { ...jobOptions, jobId: id } });
  }
  if (toAdd.length > 0) {
    await redis.sadd(keys.runJobs(runId), ...toAdd.map((j) => j.opts.jobId));
    await queue.addBulk(toAdd);
  }
  summary.enqueued = toAdd.length;
  return summary;
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
