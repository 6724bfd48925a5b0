/**
 * LeaseKeeper's lifetime bookkeeping against a real lease in Redis: the platform lifetime it extends is counted on
 * the keeper's own clock from before SetSandboxTimeout, never taken from the platform's ExpireAt, so a platform
 * (or a worker) whose clock is off cannot make the keeper believe a lifetime lasts longer than it does.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createKeyspace, createLogger, createRedis, deleteKeysMatching } from '@rollout-fleet/shared';
import { LeaseStore } from '../leases/lease-store.js';
import { LIFETIME_MARGIN_MS, LeaseKeeper } from './lease-keeper.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = createRedis(REDIS_URL);
const prefixes: string[] = [];
const MINUTE = 60_000;
const silent = createLogger({ level: 'silent', format: 'json' });

afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await deleteKeysMatching(redis, `${prefix}*`);
});
afterAll(() => redis.disconnect());

async function heldLease(): Promise<{ leases: LeaseStore; ticket: string; owner: string }> {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  const leases = new LeaseStore(redis, createKeyspace(prefix), { ttlMs: 60_000 });
  const ticket = randomUUID();
  const owner = randomUUID();
  const reserved = await leases.reserve({ ticket, owner, target: 'default', spec: 's', maxLive: 10, maxStarting: 10 });
  expect(reserved.ok).toBe(true);
  return { leases, ticket, owner };
}

describe('LeaseKeeper lifetime', () => {
  it('counts an extended lifetime from before the call on its own clock, whatever ExpireAt the platform answers', async () => {
    const { leases, ticket, owner } = await heldLease();
    const t0 = 1_800_000_000_000;
    let clock = t0;
    const asked: number[] = [];
    // A platform whose clock runs two hours ahead: its ExpireAt lies far beyond the lifetime actually granted.
    const extendLifetime = async (seconds: number): Promise<string> => {
      asked.push(seconds);
      return new Date(clock + 2 * 60 * MINUTE + seconds * 1000).toISOString();
    };
    const keeper = new LeaseKeeper({
      leases,
      ticket,
      owner,
      logger: silent,
      expiresAt: t0 + MINUTE,
      deadline: t0 + 60 * MINUTE,
      extendLifetime,
      onLost: () => undefined,
      now: () => clock,
    });
    try {
      await keeper.beat();
      expect(asked).toEqual([(60 * MINUTE + LIFETIME_MARGIN_MS) / 1000]);
      // The holder now needs it for three hours. Once the granted lifetime (deadline + margin) comes within the
      // margin, the next beat must extend again — trusting the skewed ExpireAt would wait two more hours.
      keeper.setDeadline(t0 + 180 * MINUTE);
      clock = t0 + 59 * MINUTE;
      await keeper.beat();
      expect(asked).toHaveLength(1);
      clock = t0 + 61 * MINUTE;
      await keeper.beat();
      expect(asked).toHaveLength(2);
      expect(asked[1]).toBe((119 * MINUTE + LIFETIME_MARGIN_MS) / 1000);
    } finally {
      keeper.stop();
    }
  });
});
