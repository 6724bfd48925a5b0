/**
 * Cancels a run: the run is flagged (running episodes stop within about RF_CANCEL_POLL_MS: their sandboxes
 * are killed and their result is `failed`, code CANCELLED, reward null), and every job not yet running is
 * taken out of the queue with the same result — so the run's counters reach its total and `status` /
 * `results --follow` come to an end. The payloads of the removed jobs are kept (`parked`), so
 * `retry --run <id> --failed` resumes the run where it stopped.
 */
import type { Queue } from 'bullmq';
import {
  ResultStore,
  RolloutError,
  buildFailedResult,
  parseJobId,
  toFailure,
  type EpisodeJobData,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { requireRun } from './known-run.js';

export interface CancelSummary {
  /** Jobs taken out of the queue (each now has its CANCELLED result). */
  removed: number;
  /** Jobs running right now; their workers stop them within about a second. */
  active: number;
}

const QUEUED = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

export async function cancelRun(options: {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  /** Recorded as the results' worker_id. @defaultValue 'producer' */
  by?: string;
}): Promise<CancelSummary> {
  const { queue, redis, keys, runId } = options;
  // A misspelled id must not create a (cancelled) run.
  await requireRun({ redis, keys, runId });
  await redis.hset(keys.run(runId), 'cancelled', '1');
  const store = new ResultStore(redis, keys);
  const failure = toFailure(new RolloutError('CANCELLED', `run ${runId} was cancelled before this episode started`));
  const summary: CancelSummary = { removed: 0, active: 0 };
  for (const id of await redis.smembers(keys.runJobs(runId))) {
    const ref = parseJobId(id);
    const job = await queue.getJob(id);
    if (!ref || !job) continue;
    const state = await job.getState();
    if (state === 'active') summary.active += 1;
    if (!QUEUED.has(state)) continue;
    // Parked before the job goes, so a crash in between loses no payload.
    await redis.hset(keys.parked(runId), id, JSON.stringify(job.data));
    try {
      await job.remove();
    } catch {
      // It started between the two looks: its worker sees the flag and writes the CANCELLED result itself.
      await redis.hdel(keys.parked(runId), id);
      summary.active += 1;
      continue;
    }
    const { generation } = await store.state(ref);
    const prior = job.data.attempts ?? [];
    const now = new Date().toISOString();
    const attempts = [
      ...prior,
      {
        attempt: prior.length + 1,
        worker_id: options.by ?? 'producer',
        sandbox_id: null,
        started_at: now,
        ended_at: now,
        failure,
      },
    ];
    const result = {
      ...buildFailedResult({ episode: job.data.episode, failure, attempts, workerId: options.by ?? 'producer' }),
      run_id: ref.runId,
      episode_id: ref.episodeId,
      sample_index: ref.sampleIndex,
    };
    await store.commit(result, { generation, attemptsMade: job.attemptsMade });
    summary.removed += 1;
  }
  return summary;
}
