/**
 * The fleet's identity: a random id created once in Redis (SET NX) by whichever process comes first, read by
 * every other. Sandboxes carry it as their fleet label, and the reaper only ever lists and kills sandboxes
 * with this label. It is not derived from the key prefix: two deployments that share one sandbox function
 * (and may well share a prefix such as the default `{rf}` on different Redis servers) must never reap each
 * other's sandboxes.
 */
import { randomBytes } from 'node:crypto';
import type { Keyspace, RedisClient } from '@rollout-fleet/shared';

/** Metadata key of the fleet label on every sandbox. */
export const FLEET_LABEL_KEY = 'rf-fleet';

export async function ensureFleetId(redis: RedisClient, keys: Keyspace): Promise<string> {
  const candidate = `fleet-${randomBytes(8).toString('hex')}`;
  await redis.set(keys.fleetId(), candidate, 'NX');
  const id = await redis.get(keys.fleetId());
  if (id === null) throw new Error('the fleet id vanished right after it was written (Redis flushed?)');
  return id;
}
