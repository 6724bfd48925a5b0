/**
 * Runs episodes again (`submit --force`, `retry --failed`): each episode's current result is retracted — its
 * stream line and its counts go, and its generation moves on so an execution still running cannot commit —
 * and its job is replaced by one carrying the (possibly new) payload and the attempt history so far. The next
 * result then replaces the old one for every reader: a reader from the start sees one line per episode.
 *
 * Order matters. A job that is not running is retracted first and re-added after, so no worker can take the
 * new job while the old result still stands (it would return that result and complete). A running job gets its
 * new payload first and is retracted after; the worker running it sees the generation move (EpisodeWatch),
 * stops and hands the job back, and it runs again with the new payload — unless it had already committed its
 * result and was finishing: it then completes with the result retracted and nothing would run it again (the run
 * stays one result short for good). So a running job is watched until it leaves `active`; one that completed or
 * failed meanwhile is removed and enqueued again.
 */
import type { Job, Queue } from 'bullmq';
import {
  ResultStore,
  abortableDelay,
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
/**
 * How long a running job is watched after its retract. Finishing after a commit takes a few Redis round trips;
 * a job still active after this is running (its worker hands it back) or its worker died (it stalls and re-runs).
 */
const FINISHING_WATCH_MS = 2000;
const FINISHING_POLL_MS = 50;

type JobToAdd = { name: string; data: EpisodeJobData; opts: ReturnType<typeof jobOptionsFor> & { jobId: string } };

export async function replaceEpisodes(options: ReplaceEpisodesOptions): Promise<ReplaceSummary> {
  const { queue, redis, keys, runId } = options;
  const store = new ResultStore(redis, keys);
  const now = options.now ?? (() => new Date());
  const jobOptions = jobOptionsFor(options.policy);
  const summary: ReplaceSummary = { enqueued: 0, restarted: 0 };
  const toAdd: JobToAdd[] = [];
  const running: Array<{ job: Job<EpisodeJobData>; add: JobToAdd }> = [];
  for (const episode of options.episodes) {
    const ref = { runId, episodeId: episode.episode_id, sampleIndex: episode.sample_index };
    const id = jobIdFor(runId, episode.episode_id, episode.sample_index);
    const previous = await store.get(runId, episode.episode_id, episode.sample_index);
    const data: EpisodeJobData = { episode: { ...episode, run_id: runId }, enqueued_at: now().toISOString(), attempts: previous?.attempts ?? [] };
    const job = await queue.getJob(id);
    const state = job ? await job.getState() : 'missing';
    const add: JobToAdd = { name: jobNameFor(episode.instance_id, episode.sample_index), data, opts: { ...jobOptions, jobId: id } };
    if (job && !REMOVABLE.has(state)) {
      await job.updateData(data);
      await store.retract(ref);
      running.push({ job, add });
      summary.restarted += 1;
      continue;
    }
    await store.retract(ref);
    if (job && !(await removed(job))) {
      // It started between the two looks: it runs in the old generation, so it will stop and re-run with this.
      await job.updateData(data);
      running.push({ job, add });
      summary.restarted += 1;
      continue;
    }
    toAdd.push(add);
  }
  for (const { job, add } of await finishedMeanwhile(running)) {
    if (!(await removed(job))) continue;
    toAdd.push(add);
    summary.restarted -= 1;
  }
  if (toAdd.length > 0) {
    await redis.sadd(keys.runJobs(runId), ...toAdd.map((j) => j.opts.jobId));
    await queue.addBulk(toAdd);
  }
  summary.enqueued = toAdd.length;
  return summary;
}

/** The running jobs that completed or failed (in the generation before the retract) within FINISHING_WATCH_MS. */
async function finishedMeanwhile<T extends { job: Job<EpisodeJobData> }>(running: T[]): Promise<T[]> {
  const finished: T[] = [];
  let watching = running;
  const until = Date.now() + FINISHING_WATCH_MS;
  while (watching.length > 0) {
    const states = await Promise.all(watching.map((r) => r.job.getState()));
    finished.push(...watching.filter((_, i) => states[i] === 'completed' || states[i] === 'failed'));
    watching = watching.filter((_, i) => states[i] === 'active');
    if (watching.length === 0 || Date.now() >= until) break;
    await abortableDelay(FINISHING_POLL_MS);
  }
  return finished;
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
