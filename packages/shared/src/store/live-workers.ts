/**
 * Which workers are alive, for `status` ("nothing will run: no worker"): the workers that published a metrics
 * snapshot (the `metrics` hash, one field per worker, every few seconds) and whose heartbeat key has not
 * expired. Liveness is Redis key expiry, never a comparison of clocks; a worker younger than its first
 * metrics snapshot (about 5 s) is not seen yet.
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
