import type { Queue } from 'bullmq';
import type { EpisodeJobData, Keyspace, RedisClient } from '@rollout-fleet/shared';

export interface CancelSummary {
  removed: number;
  /** Jobs running right now; workers stop them at the next step boundary. */
  active: number;
}

/**
 * Cancels a run: waiting and delayed jobs are removed, and the run is flagged so workers abandon its
 * active episodes at the next step (their sandboxes are killed as on any other path).
 */
export async function cancelRun(options: {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
}): Promise<CancelSummary> {
  const { queue, redis, keys, runId } = options;
  await redis.hset(keys.run(runId), 'cancelled', '1');
  const ids = await redis.smembers(keys.runJobs(runId));
  const summary: CancelSummary = { removed: 0, active: 0 };
  for (const id of ids) {
    const job = await queue.getJob(id);
    if (!job) continue;
    const state = await job.getState();
    if (state === 'active') summary.active += 1;
    else if (state === 'waiting' || state === 'delayed' || state === 'prioritized' || state === 'waiting-children') {
      await job.remove();
      summary.removed += 1;
    }
  }
  return summary;
}
