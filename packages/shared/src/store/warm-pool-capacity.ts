/**
 * Whether an announcement (`submit --announce`) can help: warm pools fill only in workers that run with
 * RF_WARM_POOL_MAX > 0, and only while such a worker is alive. Each worker publishes its RF_WARM_POOL_MAX as the
 * gauge `rf_warm_pool_max` in its metrics snapshot (live-workers.ts says which snapshots count); the producer reads
 * it here and says so when nothing will be pre-warmed, instead of announcing into the void.
 */
import type { RedisClient } from '../redis/create-redis.js';
import type { Keyspace } from './keys.js';
import { liveWorkers, snapshotGauge } from './live-workers.js';

/** The gauge a worker publishes: its RF_WARM_POOL_MAX (0 = no warm pool). */
export const WARM_POOL_MAX_METRIC = 'rf_warm_pool_max';

export interface WarmPoolCapacity {
  /** Live workers (a fresh heartbeat and a metrics snapshot). */
  liveWorkers: number;
  /** Live workers that keep a warm pool (RF_WARM_POOL_MAX > 0). */
  warmWorkers: number;
  /** Live workers whose snapshot does not say (an older version): they may keep one. */
  unknownWorkers: number;
  /** The largest RF_WARM_POOL_MAX among live workers: the pool's fleet-wide bound as its fillers apply it. */
  warmPoolMax: number;
}

export async function readWarmPoolCapacity(options: { redis: RedisClient; keys: Keyspace }): Promise<WarmPoolCapacity> {
  const workers = await liveWorkers(options);
  const capacity: WarmPoolCapacity = { liveWorkers: workers.length, warmWorkers: 0, unknownWorkers: 0, warmPoolMax: 0 };
  for (const worker of workers) {
    const max = snapshotGauge(worker.snapshot, WARM_POOL_MAX_METRIC);
    if (max === undefined) capacity.unknownWorkers += 1;
    else if (max > 0) capacity.warmWorkers += 1;
    capacity.warmPoolMax = Math.max(capacity.warmPoolMax, max ?? 0);
  }
  return capacity;
}

/**
 * Why an announcement will pre-warm nothing right now, or undefined when some live worker keeps (or may keep) a
 * warm pool. The announcement stands either way: it waits (until its TTL) for a worker that fills.
 */
export function announcementWarning(capacity: WarmPoolCapacity): string | undefined {
  if (capacity.liveWorkers === 0) {
    return 'no worker is running: the announcement waits for one (none alive on this Redis and prefix); start workers with RF_WARM_POOL_MAX > 0';
  }
  if (capacity.warmWorkers === 0 && capacity.unknownWorkers === 0) {
    return (
      `none of the ${capacity.liveWorkers} live worker(s) keeps a warm pool (RF_WARM_POOL_MAX=0): nothing will be pre-warmed; ` +
      'set RF_WARM_POOL_MAX on the workers'
    );
  }
  return undefined;
}
