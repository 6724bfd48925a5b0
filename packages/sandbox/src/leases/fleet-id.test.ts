/**
 * The fleet id on real Redis: created once (SET NX) by whichever process comes first, whatever the race, and
 * never derived from the key prefix — two deployments with the same prefix on different Redis servers (here:
 * different databases) get different ids, so neither can ever reap the other's sandboxes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKeyspace, createRedis, type Keyspace, type RedisClient } from '@rollout-fleet/shared';
import { ensureFleetId } from './fleet-id.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: RedisClient;
const clients: RedisClient[] = [];
const cleanup: Array<{ client: RedisClient; key: string }> = [];

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  for (const { client, key } of cleanup.splice(0)) await client.del(key);
});
afterAll(() => {
  for (const c of [redis, ...clients]) c.disconnect();
});

function connection(url = REDIS_URL): RedisClient {
  const c = createRedis(url);
  clients.push(c);
  return c;
}

function keyspace(prefix = `{rf-test-${randomUUID()}}`): Keyspace {
  const keys = createKeyspace(prefix);
  cleanup.push({ client: redis, key: keys.fleetId() });
  return keys;
}

describe('ensureFleetId', () => {
  it('twelve processes starting at once on their own connections all end up with one id, written once', async () => {
    const keys = keyspace();
    const ids = await Promise.all(Array.from({ length: 12 }, () => ensureFleetId(connection(), keys)));
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toMatch(/^fleet-[0-9a-f]{16}$/);
    expect(await redis.get(keys.fleetId())).toBe(ids[0]);
    // Later processes read it; they never replace it.
    expect(await ensureFleetId(connection(), keys)).toBe(ids[0]);
  });

  it('is not derived from the prefix: the same prefix on another Redis gets another id', async () => {
    const prefix = `{rf-test-${randomUUID()}}`;
    const keys = keyspace(prefix);
    const otherDb = connection(`${REDIS_URL.replace(/\/\d*$/, '')}/5`);
    cleanup.push({ client: otherDb, key: keys.fleetId() });
    const here = await ensureFleetId(redis, keys);
    const there = await ensureFleetId(otherDb, createKeyspace(prefix));
    expect(there).not.toBe(here);
  });
});
