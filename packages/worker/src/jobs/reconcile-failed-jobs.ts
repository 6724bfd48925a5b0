/**
 * Safety net behind the `failed` event: a worker that died between BullMQ failing a job and writing its
 * result leaves a failed job without one. One pass at a time fleet-wide (a Redis lock with a TTL) looks at
 * the jobs that failed recently and settles each that has no result (settle-failed-job.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import {
  releaseLock,
  type EpisodeJobData,
  type Keyspace,
  type Logger,
  type RedisClient,
  type ResultStore,
} from '@rollout-fleet/shared';
import { settleFailedJob } from './settle-failed-job.js';

export interface ReconcileOptions {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  results: ResultStore;
  logger: Logger;
  workerId: string;
  /** Failed jobs finished longer ago than this are left alone. @defaultValue 1 hour */
  windowMs?: number;
  /** At most this many recent failed jobs per pass. @defaultValue 500 */
  limit?: number;
  lockTtlMs?: number;
  now?: () => number;
}

/** One pass; returns how many jobs got their result (-1 when another process holds the lock). */
export async function reconcileFailedJobs(o: ReconcileOptions): Promise<number> {
  const token = randomUUID();
  const locked = await o.redis.set(o.keys.reconcileLock(), token, 'PX', o.lockTtlMs ?? 60_000, 'NX');
  if (locked !== 'OK') return -1;
  let settled = 0;
  try {
    const since = (o.now ?? Date.now)() - (o.windowMs ?? 60 * 60 * 1000);
    // Newest first: the window ends the walk.
    for (const job of await o.queue.getFailed(0, (o.limit ?? 500) - 1)) {
      if ((job.finishedOn ?? 0) < since) break;
      const outcome = await settleFailedJob({ results: o.results, workerId: o.workerId }, job).catch((err: unknown) => {
        o.logger.warn({ err, jobId: job.id }, 'reconciler: could not settle a failed job');
        return 'error' as const;
      });
      if (outcome === 'settled') settled += 1;
    }
  } finally {
    await releaseLock(o.redis, o.keys.reconcileLock(), token);
  }
  if (settled > 0) o.logger.info({ settled }, 'reconciler wrote results for failed jobs that had none');
  return settled;
}
