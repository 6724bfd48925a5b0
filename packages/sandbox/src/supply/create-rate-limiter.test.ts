/**
 * The fleet's create-rate limiter (create-rate/*.lua) on real Redis: GCRA booking (burst, then one create per
 * interval, on Redis's clock), the booking horizon, AIMD (429 → multiplicative decrease once per cooldown,
 * linear recovery, floor and ceiling), and racing / randomized callers on separate connections.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createKeyspace,
  createRedis,
  deleteKeysMatching,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { CreateRateLimiter, type CreateRateOptions, type TakeOutcome } from './create-rate-limiter.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: RedisClient;
const clients: RedisClient[] = [];
const prefixes: string[] = [];

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) {
    await deleteKeysMatching(redis, `rf:${prefix}:*`);
  }
});
afterAll(() => {
  for (const c of [redis, ...clients]) c.disconnect();
});

function keyspace(): Keyspace {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  return createKeyspace(prefix);
}

function limiterOn(
  keys: Keyspace,
  options: Partial<CreateRateOptions> = {},
  client: RedisClient = redis,
): CreateRateLimiter {
  return new CreateRateLimiter(client, keys, { ratePerS: 10, burst: 3, recoverS: 60, ...options });
}

function connection(): RedisClient {
  const c = createRedis(REDIS_URL);
  clients.push(c);
  return c;
}

type Booked = Extract<TakeOutcome, { booked: true }>;

/**
 * In any window, no more bookings than the burst plus the rate allows: bookings i..j (sorted) span at least
 * (j − i + 1 − burst) intervals.
 */
function expectConforming(at: number[], o: { ratePerS: number; burst: number }): void {
  const sorted = [...at].sort((a, b) => a - b);
  const interval = 1000 / o.ratePerS;
  let worst = Infinity;
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + o.burst; j < sorted.length; j++) {
      worst = Math.min(worst, (sorted[j] as number) - (sorted[i] as number) - (j - i + 1 - o.burst) * interval);
    }
  }
  expect(worst).toBeGreaterThanOrEqual(-1);
}

describe('CreateRateLimiter (GCRA)', () => {
  it('books a burst at once, then one create per interval', async () => {
    const limiter = limiterOn(keyspace(), { ratePerS: 10, burst: 3, horizonMs: 10_000 });
    const outcomes: Booked[] = [];
    for (let i = 0; i < 7; i++) {
      const o = await limiter.take('t');
      expect(o.booked).toBe(true);
      outcomes.push(o as Booked);
    }
    const start = outcomes[0]!.at;
    // 3 at once; then one every 100 ms. GCRA books max(now, theoretical slot): a slow call (a loaded machine)
    // only moves "now", so each booking is checked against the server time of its own call (at − waitMs).
    expect(outcomes.slice(0, 3).map((o) => o.waitMs)).toEqual([0, 0, 0]);
    for (let i = 3; i < 7; i++) {
      const o = outcomes[i]!;
      const slot = start + (i - 2) * 100;
      const calledAt = o.at - o.waitMs;
      expect(o.at).toBeGreaterThanOrEqual(slot - 1);
      expect(o.at).toBeLessThanOrEqual(Math.max(calledAt, slot) + 1);
    }
    expectConforming(
      outcomes.map((o) => o.at),
      { ratePerS: 10, burst: 3 },
    );
  });

  it('books nothing beyond the horizon, and says when to come back', async () => {
    const limiter = limiterOn(keyspace(), { ratePerS: 10, burst: 1, horizonMs: 250 });
    const booked: TakeOutcome[] = [];
    for (let i = 0; i < 3; i++) booked.push(await limiter.take('t'));
    expect(booked.map((o) => o.booked)).toEqual([true, true, true]);
    const before = await limiter.peek('t');
    const refused = await limiter.take('t');
    expect(refused.booked).toBe(false);
    if (refused.booked) return;
    // Booked at 0, 100 and 200 ms; the 4th slot is ~300 ms out, ~50 beyond the horizon.
    expect(refused.retryMs).toBeGreaterThan(0);
    expect(refused.retryMs).toBeLessThanOrEqual(60);
    const after = await limiter.peek('t');
    // Nothing was booked: the schedule only moved closer with time.
    expect(after.aheadMs).toBeLessThanOrEqual(before.aheadMs);
  });

  it('keeps targets apart and honours a per-target ceiling', async () => {
    const limiter = limiterOn(keyspace(), { ratePerS: 10, burst: 1, horizonMs: 10_000 });
    const a1 = await limiter.take('a');
    const b1 = await limiter.take('b', { ratePerS: 2 });
    const b2 = await limiter.take('b', { ratePerS: 2 });
    expect(a1).toMatchObject({ booked: true, waitMs: 0 });
    expect(b1).toMatchObject({ booked: true, waitMs: 0, ratePerS: 2 });
    expect(b2.booked && b2.waitMs).toBeGreaterThan(450);
  });

  it('racing callers on four connections get a conforming schedule with no double booking', async () => {
    const keys = keyspace();
    const limiters = Array.from({ length: 4 }, () =>
      limiterOn(keys, { ratePerS: 50, burst: 5, horizonMs: 60_000 }, connection()),
    );
    const outcomes = await Promise.all(limiters.flatMap((l) => Array.from({ length: 25 }, () => l.take('t'))));
    expect(outcomes.every((o) => o.booked)).toBe(true);
    const at = outcomes.map((o) => o.at);
    expectConforming(at, { ratePerS: 50, burst: 5 });
    // 100 bookings at 50/s with a burst of 5: the last one ~1.9 s after the first.
    const span = Math.max(...at) - Math.min(...at);
    expect(span).toBeGreaterThanOrEqual((100 - 5) * 20 - 1);
    expect(span).toBeLessThan((100 - 5) * 20 + 200);
  });
});

describe('CreateRateLimiter (AIMD)', () => {
  it('halves the rate on a 429, once per cooldown however many 429s arrive together', async () => {
    const keys = keyspace();
    const limiter = limiterOn(keys, { ratePerS: 16, dropCooldownMs: 60_000 });
    const others = Array.from({ length: 3 }, () =>
      limiterOn(keys, { ratePerS: 16, dropCooldownMs: 60_000 }, connection()),
    );
    const rates = await Promise.all([limiter, ...others].map((l) => l.drop('t')));
    // One decrease (16 → 8); the others, inside the cooldown, only see it (plus a hair of recovery).
    for (const rate of rates) expect(rate).toBeCloseTo(8, 1);
    expect((await limiter.peek('t')).ratePerS).toBeCloseTo(8, 0);
  });

  it('never goes below the floor nor above the ceiling', async () => {
    const limiter = limiterOn(keyspace(), { ratePerS: 16, floorPerS: 2, dropCooldownMs: 0 });
    let rate = 16;
    for (let i = 0; i < 10; i++) rate = await limiter.drop('t');
    expect(rate).toBe(2);
    const fresh = limiterOn(keyspace(), { ratePerS: 16 });
    expect((await fresh.peek('t')).ratePerS).toBe(16);
  });

  it('climbs back linearly while no 429 comes (recovery from the floor to the ceiling in recoverS)', async () => {
    const keys = keyspace();
    const limiter = limiterOn(keys, { ratePerS: 20, floorPerS: 4, recoverS: 100, dropCooldownMs: 0 });
    for (let i = 0; i < 5; i++) await limiter.drop('t');
    expect((await limiter.peek('t')).ratePerS).toBeCloseTo(4, 1);
    // Pretend the last change was 10 s ago (Redis server ms): recovery is (20 − 4) / 100 = 0.16/s per second.
    const serverNowMs = Number((await redis.time())[0]) * 1000;
    await redis.hset(keys.createRate('t'), 'changed', serverNowMs - 10_000);
    const rate = (await limiter.peek('t')).ratePerS;
    expect(rate).toBeGreaterThan(4 + 1.6 - 0.2);
    expect(rate).toBeLessThan(4 + 1.6 + 0.4);
    // A long quiet spell tops out at the ceiling.
    await redis.hset(keys.createRate('t'), 'changed', serverNowMs - 3_600_000);
    expect((await limiter.peek('t')).ratePerS).toBe(20);
  });

  it('randomized interleavings of takes and 429s on three connections keep the rate within bounds and bookings ordered', async () => {
    const keys = keyspace();
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const limiters = Array.from({ length: 3 }, () =>
      limiterOn(keys, { ratePerS: 40, floorPerS: 2.5, burst: 4, dropCooldownMs: 5, horizonMs: 60_000 }, connection()),
    );
    for (let round = 0; round < 15; round++) {
      const ops = Array.from({ length: 8 }, () => {
        const l = limiters[Math.floor(random() * limiters.length)]!;
        return random() < 0.2 ? l.drop('t').then((rate) => ({ rate })) : l.take('t');
      });
      const outcomes = await Promise.all(ops);
      for (const o of outcomes) {
        const rate = 'ratePerS' in o ? o.ratePerS : o.rate;
        expect(rate).toBeGreaterThanOrEqual(2.5);
        expect(rate).toBeLessThanOrEqual(40);
      }
    }
    // Whatever the interleaving, the schedule never runs behind itself: a booking now lands after all earlier ones.
    const before = await limiters[0]!.peek('t');
    const last = (await limiters[1]!.take('t')) as Booked;
    expect(last.booked).toBe(true);
    expect(last.waitMs).toBeGreaterThanOrEqual(Math.max(0, before.aheadMs - 3 * (1000 / 2.5)) - 5);
  });
});
