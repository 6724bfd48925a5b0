/**
 * The fleet-wide inflight limiter on real Redis: several limiter instances on their own connections stand for
 * worker processes. Racing and randomized interleavings never put more than the limit in flight; waiting is not
 * an error; a dead holder's slot comes back by Redis expiry; aborting a wait holds nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createKeyspace, createRedis, type Keyspace, type RedisClient } from '@rollout-fleet/shared';
import { InflightLimiter, endpointIdOf } from './inflight-limiter.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ENDPOINT = 'http://10.0.0.5:8000/v1';

const connections: RedisClient[] = [];
function connect(): RedisClient {
  const redis = createRedis(REDIS_URL);
  connections.push(redis);
  return redis;
}

function freshKeys(): Keyspace {
  return createKeyspace(`{rf-test-${randomUUID()}}`);
}

/** A deterministic PRNG so a failing interleaving can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Lets other tasks run: a random number of macrotask turns (no wall-clock sleeps). */
async function yieldTurns(random: () => number): Promise<void> {
  const turns = Math.floor(random() * 4);
  for (let i = 0; i < turns; i += 1) await new Promise<void>((resolve) => setImmediate(resolve));
}

afterAll(async () => {
  for (const redis of connections) redis.disconnect();
});

describe('InflightLimiter', () => {
  it('names one endpoint however its URL is spelled, and keeps the keyspace hash tag', () => {
    expect(endpointIdOf('http://Host:8000/v1/')).toBe(endpointIdOf('http://host:8000/v1'));
    expect(endpointIdOf('http://host:8000/v1')).not.toBe(endpointIdOf('http://host:8001/v1'));
    const keys = createKeyspace('{rf}');
    expect(keys.policyInflight(endpointIdOf(ENDPOINT))).toMatch(/^rf:\{rf\}:policy-inflight:[0-9a-f]{16}$/);
  });

  it('never lets more than the limit in flight across processes, in randomized interleavings', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = prng(seed);
      const keys = freshKeys();
      const limit = 1 + Math.floor(random() * 4);
      const limiters = Array.from(
        { length: 4 },
        () => new InflightLimiter(connect(), keys, { limit, minPollMs: 1, maxPollMs: 5 }),
      );
      let inFlight = 0;
      let peak = 0;
      const tasks = Array.from({ length: 24 }, async (_unused, i) => {
        const limiter = limiters[i % limiters.length]!;
        await yieldTurns(random);
        await limiter.withSlot(ENDPOINT, async () => {
          inFlight += 1;
          peak = Math.max(peak, inFlight);
          await yieldTurns(random);
          inFlight -= 1;
        });
      });
      await Promise.all(tasks);
      expect({ seed, limit, peak: peak <= limit }).toEqual({ seed, limit, peak: true });
      expect(peak, `seed ${seed}: the limit is reached, not just respected`).toBe(limit);
      // Released slots leave no members behind.
      expect(await connect().zcard(keys.policyInflight(endpointIdOf(ENDPOINT)))).toBe(0);
    }
  });

  it('counts the slots in Redis: the set never holds more than the limit while holders race', async () => {
    const keys = freshKeys();
    const redis = connect();
    const limit = 3;
    const key = keys.policyInflight(endpointIdOf(ENDPOINT));
    const limiters = Array.from(
      { length: 6 },
      () => new InflightLimiter(connect(), keys, { limit, minPollMs: 1, maxPollMs: 5 }),
    );
    const observed: number[] = [];
    await Promise.all(
      limiters.flatMap((limiter) =>
        Array.from({ length: 5 }, () =>
          limiter.withSlot(ENDPOINT, async () => {
            observed.push(await redis.zcard(key));
          }),
        ),
      ),
    );
    expect(observed).toHaveLength(30);
    expect(Math.max(...observed)).toBeLessThanOrEqual(limit);
  });

  it('keeps each endpoint to its own limit', async () => {
    const keys = freshKeys();
    const limiter = new InflightLimiter(connect(), keys, { limit: 1 });
    const a = await limiter.acquire('http://a:8000/v1');
    const b = await limiter.acquire('http://b:8000/v1');
    expect(a.waitedMs).toBeLessThan(1000);
    expect(b.waitedMs).toBeLessThan(1000);
    await Promise.all([a.release(), b.release()]);
  });

  it('hands a released slot to a waiter in the same process at once', async () => {
    const keys = freshKeys();
    const limiter = new InflightLimiter(connect(), keys, { limit: 1, minPollMs: 60_000, maxPollMs: 60_000 });
    const held = await limiter.acquire(ENDPOINT);
    let waiterHasIt = false;
    const waiter = limiter.acquire(ENDPOINT).then((slot) => {
      waiterHasIt = true;
      return slot;
    });
    // The waiter is parked (a one-minute poll) until the release wakes it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(waiterHasIt).toBe(false);
    await held.release();
    const slot = await waiter;
    expect(slot.waitedMs).toBeLessThan(30_000);
    await slot.release();
    await slot.release();
  });

  it("gives a dead holder's slot back once it expires on the Redis clock", async () => {
    const keys = freshKeys();
    const key = keys.policyInflight(endpointIdOf(ENDPOINT));
    const deadRedis = connect();
    const dead = new InflightLimiter(deadRedis, keys, { limit: 1, slotTtlMs: 300 });
    await dead.acquire(ENDPOINT);
    // The "process" dies: its connection goes away, no release, no more heartbeats.
    deadRedis.disconnect();
    const live = new InflightLimiter(connect(), keys, { limit: 1, slotTtlMs: 300, minPollMs: 5, maxPollMs: 20 });
    const slot = await live.acquire(ENDPOINT);
    expect(slot.waitedMs).toBeGreaterThan(100);
    await slot.release();
    // An idle endpoint leaves no key behind once its slots have expired.
    const redis = connect();
    const pttl = await redis.pttl(key);
    expect(pttl === -2 || (pttl > 0 && pttl <= 300)).toBe(true);
  });

  it('keeps a slot alive while its holder runs longer than the ttl', async () => {
    const keys = freshKeys();
    const holder = new InflightLimiter(connect(), keys, { limit: 1, slotTtlMs: 150 });
    const other = new InflightLimiter(connect(), keys, { limit: 1, slotTtlMs: 150, minPollMs: 5, maxPollMs: 10 });
    const redis = connect();
    const key = keys.policyInflight(endpointIdOf(ENDPOINT));
    const slot = await holder.acquire(ENDPOINT);
    const controller = new AbortController();
    const contender = other.acquire(ENDPOINT, controller.signal).then(
      () => 'taken',
      () => 'aborted',
    );
    // Several ttls pass on the Redis clock while the heartbeat renews the slot: the contender never gets in.
    const redisMicros = async (): Promise<number> => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1_000_000 + Number(micros);
    };
    const start = await redisMicros();
    for (;;) {
      if ((await redisMicros()) - start > 600_000) break;
      expect(await redis.zcard(key)).toBe(1);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    controller.abort(new Error('enough'));
    expect(await contender).toBe('aborted');
    await slot.release();
  });

  it('stops waiting when aborted, with the abort reason, and holds nothing', async () => {
    const keys = freshKeys();
    const limiter = new InflightLimiter(connect(), keys, { limit: 1, minPollMs: 5, maxPollMs: 10 });
    const held = await limiter.acquire(ENDPOINT);
    const controller = new AbortController();
    const waiting = limiter.acquire(ENDPOINT, controller.signal);
    const reason = new Error('episode cancelled');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await held.release();
    expect(await connect().zcard(keys.policyInflight(endpointIdOf(ENDPOINT)))).toBe(0);
  });
});
