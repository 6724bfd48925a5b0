import type { RedisClient } from '../redis/create-redis.js';
import type { Keyspace } from './keys.js';
import { getRunFidelity, type RunFidelity } from './run-fidelity.js';

export interface RunStatus {
  runId: string;
  exists: boolean;
  createdAt: string | null;
  cancelled: boolean;
  total: number;
  done: number;
  completed: number;
  failed: number;
  resolved: number;
  duplicates: number;
  /** RL groups (distinct episode ids) registered for the run. */
  groups: number;
  /** Groups whose every sample has a result (their group-completed event was emitted). */
  groupsCompleted: number;
  active: number;
  /** Waiting for a retry after an infra failure (BullMQ delayed). */
  retrying: number;
  /** In the queue, not taken yet. A cancelled run has none: a cancel takes them out (its jobs stop). */
  waiting: number;
  /** Counted in `total` but not in the queue yet: a submit is enqueueing them (`submitting`) or was interrupted. */
  notEnqueued: number;
  /** A submit of this run is enqueueing right now. */
  submitting: boolean;
  /** resolved / completed (null before the first completion). */
  resolvedRate: number | null;
  /** Results per second over the most recent completions (null with fewer than two). */
  throughputPerS: number | null;
  etaS: number | null;
  /** Replay fidelity of the run's replayed episodes (run-fidelity.ts). */
  fidelity: RunFidelity;
}

/** How many recent completions the throughput estimate looks at. */
const THROUGHPUT_WINDOW = 200;

/**
 * A run's progress from its counters alone — the run hash, the size of its running and retrying sets
 * (kept by the workers, see the worker's run-activity script) and the last few completions — never by
 * listing the queue's jobs: `status` and the run pages cost the same with ten or ten thousand active jobs.
 */
export async function getRunStatus(options: { redis: RedisClient; keys: Keyspace; runId: string }): Promise<RunStatus> {
  const { redis, keys, runId } = options;
  const [hash, groups, recent, active, retryingCount, fidelity, submitting] = await Promise.all([
    redis.hgetall(keys.run(runId)),
    redis.hlen(keys.groupSizes(runId)),
    redis.xrevrange(keys.results(runId), '+', '-', 'COUNT', THROUGHPUT_WINDOW),
    redis.hlen(keys.runActive(runId)),
    redis.scard(keys.runRetrying(runId)),
    getRunFidelity(redis, keys, runId),
    redis.exists(keys.submitting(runId)),
  ]);
  const num = (field: string): number => Number(hash[field] ?? 0);
  const total = num('total');
  const done = num('done');
  const completed = num('completed');
  const pending = Math.max(0, total - done);
  const activeCount = Math.min(active, pending);
  // A retry whose job was removed meanwhile (cancel, force) may linger in the set: never more than is left.
  const retrying = Math.min(retryingCount, pending - activeCount);
  const notEnqueued = Math.min(Math.max(0, num('not_enqueued')), pending - activeCount - retrying);
  const cancelled = hash.cancelled === '1';
  const throughputPerS = throughput(recent.map(([id]) => Number(id.split('-')[0])));
  return {
    runId,
    exists: Object.keys(hash).length > 0,
    createdAt: hash.created_at ?? null,
    cancelled,
    total,
    done,
    completed,
    failed: num('failed'),
    resolved: num('resolved'),
    duplicates: num('duplicates'),
    groups,
    groupsCompleted: num('groups_completed'),
    active: activeCount,
    retrying,
    // What a cancel left pending is stopping (active) or was never enqueued: nothing of it waits.
    waiting: cancelled ? 0 : Math.max(0, pending - activeCount - retrying - notEnqueued),
    notEnqueued,
    submitting: submitting === 1,
    resolvedRate: completed > 0 ? num('resolved') / completed : null,
    throughputPerS,
    etaS: throughputPerS && throughputPerS > 0 ? Math.round(pending / throughputPerS) : pending === 0 ? 0 : null,
    fidelity,
  };
}

/** Completions per second from the timestamps (ms, newest first) of the most recent results. */
function throughput(timestampsMs: number[]): number | null {
  if (timestampsMs.length < 2) return null;
  const newest = timestampsMs[0] as number;
  const oldest = timestampsMs[timestampsMs.length - 1] as number;
  const spanS = Math.max(0.001, (newest - oldest) / 1000);
  return (timestampsMs.length - 1) / spanS;
}
