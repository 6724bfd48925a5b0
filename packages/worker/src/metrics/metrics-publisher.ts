/**
 * Workers publish their metrics snapshot to one Redis hash (field = worker id) every few seconds; the
 * dashboard reads the hash and aggregates with prom-client's AggregatorRegistry (counters and histograms
 * summed across workers). Snapshots of workers gone longer than `staleAfterMs` are dropped.
 */
import type { Keyspace, RedisClient } from '@rollout-fleet/shared';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';

interface Snapshot {
  at: number;
  metrics: Array<MetricObjectWithValues<MetricValue<string>>>;
}

export async function publishMetrics(
  redis: RedisClient,
  keys: Keyspace,
  workerId: string,
  registry: Registry,
  now = Date.now(),
): Promise<void> {
  const snapshot: Snapshot = { at: now, metrics: await registry.getMetricsAsJSON() };
  await redis.hset(keys.metrics(), workerId, JSON.stringify(snapshot));
}

export async function unpublishMetrics(redis: RedisClient, keys: Keyspace, workerId: string): Promise<void> {
  await redis.hdel(keys.metrics(), workerId);
}

/** One registry summing every live worker's snapshot; stale snapshots are deleted on the way. */
export async function aggregateFleetMetrics(
  redis: RedisClient,
  keys: Keyspace,
  options: { staleAfterMs: number; now?: number },
): Promise<Registry> {
  const now = options.now ?? Date.now();
  const all = await redis.hgetall(keys.metrics());
  const live: Snapshot['metrics'][] = [];
  const stale: string[] = [];
  for (const [workerId, raw] of Object.entries(all)) {
    const snapshot = JSON.parse(raw) as Snapshot;
    if (now - snapshot.at > options.staleAfterMs) stale.push(workerId);
    else live.push(snapshot.metrics);
  }
  if (stale.length > 0) await redis.hdel(keys.metrics(), ...stale);
  return AggregatorRegistry.aggregate(live);
}
