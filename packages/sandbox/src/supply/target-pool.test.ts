/**
 * Target health (target-health/*.lua via TargetPool) on real Redis: a target that fails `threshold` times within
 * the window is drained fleet-wide for a while (each drain in a row twice as long, up to the maximum), a
 * success clears the failure count, picks avoid a drained target until Redis expires the flag — and racing or
 * randomly interleaved failures from several processes' connections start one drain per threshold crossing,
 * never more.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createKeyspace,
  createRedis,
  deleteKeysMatching,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { createVefaasClient } from '../vefaas/create-vefaas-client.js';
import { type VefaasTarget } from '../agent-env/agent-env.js';
import { TargetPool, type SupplyTarget, type TargetHealthOptions } from './target-pool.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: RedisClient;
const clients: RedisClient[] = [];
const prefixes: string[] = [];
// The pool never calls a target; these only name an endpoint nothing listens on.
const vefaas = createVefaasClient({
  endpoint: 'http://127.0.0.1:9',
  region: 'cn-beijing',
  credentials: { accessKeyId: 'AK', secretAccessKey: 'SK' },
});
const target: VefaasTarget = { vefaas, functionId: 'fn', gatewayUrl: 'http://127.0.0.1:9' };

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await deleteKeysMatching(redis, `rf:${prefix}:*`);
});
afterAll(async () => {
  for (const c of [redis, ...clients]) c.disconnect();
  await vefaas.close();
});

function keyspace(): Keyspace {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  return createKeyspace(prefix);
}

function connection(): RedisClient {
  const c = createRedis(REDIS_URL);
  clients.push(c);
  return c;
}

const TARGETS: SupplyTarget[] = [
  { id: 'east', target, weight: 3 },
  { id: 'west', target, weight: 1 },
];

function poolOn(keys: Keyspace, options: TargetHealthOptions = {}, client: RedisClient = redis): TargetPool {
  return new TargetPool(client, keys, TARGETS, {
    threshold: 3,
    windowMs: 60_000,
    firstDrainMs: 300,
    maxDrainMs: 1_000,
    cacheMs: 0,
    ...options,
  });
}

async function picks(pool: TargetPool, n: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) seen.add((await pool.pick(() => i / n)).id);
  return seen;
}

describe('TargetPool health (target-health/*.lua)', () => {
  it('drains a target after `threshold` failures in the window, picks the others meanwhile, and takes it back when Redis expires the drain', async () => {
    const keys = keyspace();
    const pool = poolOn(keys);
    expect(await picks(pool, 8)).toEqual(new Set(['east', 'west']));
    expect(await pool.failure('east')).toBe(0);
    expect(await pool.failure('east')).toBe(0);
    expect(await pool.failure('east')).toBe(300);
    expect(await pool.drained()).toEqual(new Set(['east']));
    expect(await picks(pool, 8)).toEqual(new Set(['west']));
    const pttl = await redis.pttl(keys.targetHealth('east').drained);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(300);
    await vi.waitFor(async () => expect(await pool.drained()).toEqual(new Set()), { timeout: 5_000, interval: 20 });
    expect(await picks(pool, 8)).toEqual(new Set(['east', 'west']));
  });

  it('a success clears the failures counted so far; failures spread wider than the window never drain', async () => {
    const keys = keyspace();
    const pool = poolOn(keys);
    await pool.failure('west');
    await pool.failure('west');
    await pool.success('west');
    expect(await pool.failure('west')).toBe(0);
    expect(await pool.failure('west')).toBe(0);
    expect(await pool.drained()).toEqual(new Set());

    const windowedKeys = keyspace();
    const windowed = poolOn(windowedKeys, { windowMs: 100 });
    expect(await windowed.failure('east')).toBe(0);
    expect(await windowed.failure('east')).toBe(0);
    // The window lapses (a key TTL on Redis's clock): the count starts over, so a third failure drains nothing.
    await vi.waitFor(async () => expect(await redis.exists(windowedKeys.targetHealth('east').failures)).toBe(0), {
      timeout: 5_000,
      interval: 10,
    });
    expect(await windowed.failure('east')).toBe(0);
    expect(await windowed.drained()).toEqual(new Set());
  });

  it('drains in a row last twice as long each time, up to the maximum', async () => {
    const keys = keyspace();
    const pool = poolOn(keys, { threshold: 1, firstDrainMs: 100, maxDrainMs: 350 });
    const drains: number[] = [];
    for (let i = 0; i < 4; i++) {
      drains.push(await pool.failure('east'));
      // While drained, more failures start no further drain.
      expect(await pool.failure('east')).toBe(0);
      await vi.waitFor(async () => expect(await redis.exists(keys.targetHealth('east').drained)).toBe(0), {
        timeout: 5_000,
        interval: 10,
      });
    }
    expect(drains).toEqual([100, 200, 350, 350]);
  });

  it('racing failures from four connections start exactly one drain per threshold crossing', async () => {
    const keys = keyspace();
    const pools = Array.from({ length: 4 }, () =>
      poolOn(keys, { threshold: 5, firstDrainMs: 60_000, maxDrainMs: 60_000 }, connection()),
    );
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => pools[i % pools.length]!.failure('west')));
    expect(outcomes.filter((ms) => ms > 0)).toEqual([60_000]);
    expect(await redis.get(keys.targetHealth('west').drains)).toBe('1');
    // Every pool sees the drain (fleet-wide), none sees the other target drained.
    for (const pool of pools) expect(await pool.drained()).toEqual(new Set(['west']));
  });

  it('randomized interleavings of failures and successes on three connections: drains never exceed failures ÷ threshold, each is first × 2^k capped', async () => {
    let seed = 4242;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let trial = 0; trial < 6; trial++) {
      const keys = keyspace();
      const threshold = 2 + Math.floor(random() * 3);
      const pools = Array.from({ length: 3 }, () =>
        poolOn(keys, { threshold, firstDrainMs: 40, maxDrainMs: 150 }, connection()),
      );
      let failures = 0;
      const drains: number[] = [];
      for (let round = 0; round < 12; round++) {
        const ops = Array.from({ length: 6 }, () => {
          const pool = pools[Math.floor(random() * pools.length)]!;
          if (random() < 0.15) return pool.success('east').then(() => 0);
          failures += 1;
          return pool.failure('east');
        });
        drains.push(...(await Promise.all(ops)).filter((ms) => ms > 0));
        const pttl = await redis.pttl(keys.targetHealth('east').drained);
        expect(pttl).toBeLessThanOrEqual(150);
        if (random() < 0.3) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(drains.length).toBeLessThanOrEqual(Math.floor(failures / threshold));
      expect(drains.length).toBeGreaterThan(0);
      // Each drain is the first of a streak, or twice the one before it, capped.
      drains.forEach((ms, i) => expect(i === 0 ? [40] : [40, Math.min(150, 2 * drains[i - 1]!)]).toContain(ms));
      // The other target was never touched.
      expect(await redis.exists(keys.targetHealth('west').drained, keys.targetHealth('west').failures)).toBe(0);
    }
  });
});
