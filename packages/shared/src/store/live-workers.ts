/**
 * Which workers are alive, for `status` ("nothing will run: no worker") and for announcements ("nothing will be
 * pre-warmed"): the workers that published a metrics snapshot (the `metrics` hash, one field per worker, at start
 * and every few seconds) and whose heartbeat key has not expired. Liveness is Redis key expiry, never a
 * comparison of clocks.
 * Wire contract (Redis, under the keyspace's hash tag):
 *   metrics             hash     worker id → JSON snapshot {"at", "metrics": prom-client's getMetricsAsJSON()}
 *   worker-alive:<id>   string   '1', PX 30 s, renewed every 5 s; deleted when the worker stops
 */
import type { RedisClient } from '../redis/create-redis.js';
import type { Keyspace } from './keys.js';

export async function liveWorkerIds(options: { redis: RedisClient; keys: Keyspace }): Promise<string[]> {
  const { redis, keys } = options;
  const ids = await redis.hkeys(keys.metrics());
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.exists(keys.workerAlive(id));
  const answers = (await pipeline.exec()) ?? [];
  return ids.filter((_, i) => answers[i]?.[1] === 1);
}

export interface LiveWorker {
  id: string;
  /** Its latest metrics snapshot, as published (JSON); absent when it was deleted in between. */
  snapshot: string | undefined;
}

/** The live workers with their latest metrics snapshot (read only for them: a dead worker's may linger). */
export async function liveWorkers(options: { redis: RedisClient; keys: Keyspace }): Promise<LiveWorker[]> {
  const { redis, keys } = options;
  const ids = await liveWorkerIds({ redis, keys });
  if (ids.length === 0) return [];
  const snapshots = await redis.hmget(keys.metrics(), ...ids);
  return ids.map((id, i) => ({ id, snapshot: snapshots[i] ?? undefined }));
}

/**
 * The value of a gauge without labels in a worker's snapshot; undefined when the snapshot does not carry it (a
 * worker of an older version) or cannot be read.
 */
export function snapshotGauge(snapshot: string | undefined, name: string): number | undefined {
  if (snapshot === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(snapshot);
  } catch {
    return undefined;
  }
  const metrics = (parsed as { metrics?: unknown }).metrics;
  if (!Array.isArray(metrics)) return undefined;
  const metric = (metrics as Array<{ name?: unknown; values?: unknown }>).find((m) => m.name === name);
  const value = Array.isArray(metric?.values)
    ? (metric.values[0] as { value?: unknown } | undefined)?.value
    : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
