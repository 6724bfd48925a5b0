/**
 * The reaper's re-check (issue #9's mutation list): a lease whose index entry says "expired" while its lease
 * key was renewed in the meantime is alive, and the purge that dooms expired sandboxes for the reaper must look
 * at the key, not only at the index. The state is built directly (index score in the past, key alive) because
 * that interleaving — a renewal landing between the index going stale and the purge — cannot be timed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyspace, createRedis, deleteKeysMatching, type RedisClient } from '@rollout-fleet/shared';
import { LeaseStore } from './lease-store.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('the purge behind the reaper re-checks the lease itself', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;

  beforeAll(() => {
    redis = createRedis(REDIS_URL);
  });
  afterAll(async () => {
    await deleteKeysMatching(redis, `rf:${prefix}:*`);
    redis.disconnect();
  });

  it('spares a lease renewed after its index entry went stale, dooms one that really expired', async () => {
    const store = new LeaseStore(redis, keys, { ttlMs: 60_000 });
    const slot = async (): Promise<{ ticket: string; owner: string }> => {
      const ticket = randomUUID();
      const owner = randomUUID();
      const outcome = await store.reserve({
        ticket,
        owner,
        target: 'default',
        spec: 's',
        maxLive: 10,
        maxStarting: 10,
        fields: { worker: 'w', job: 'j', role: 'main' },
      });
      expect(outcome.ok).toBe(true);
      await store.update(ticket, owner, { target: 'default', sandbox: `sb-${ticket}`, spec: 's', leaveStarting: true });
      return { ticket, owner };
    };
    const renewed = await slot();
    const expired = await slot();
    // Both index entries look expired; only `expired` has lost its lease key.
    await redis.zadd(keys.leases(), 1, renewed.ticket, 1, expired.ticket);
    await redis.del(keys.lease(expired.ticket));
    // Any reservation runs the purge.
    await store.reserve({
      ticket: randomUUID(),
      owner: 'probe',
      target: 'default',
      spec: 's',
      maxLive: 10,
      maxStarting: 10,
      fields: { worker: 'w', job: 'j', role: 'main' },
    });
    expect(await store.takeDoomed()).toEqual([{ target: 'default', sandboxId: `sb-${expired.ticket}` }]);
    expect(await store.renew(renewed.ticket, renewed.owner)).toBe(true);
  });
});
