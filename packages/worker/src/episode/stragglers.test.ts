/** The straggler policy on real Redis: the tail, the p90 rule, the minimum of samples, and a racing budget. */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createKeyspace,
  createRedis,
  deleteKeysMatching,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { StragglerPolicy } from './stragglers.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: RedisClient;
const prefixes: string[] = [];

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) await deleteKeysMatching(redis, `rf:${prefix}:*`);
});
afterAll(() => redis.disconnect());

function keyspace(): Keyspace {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  return createKeyspace(prefix);
}

describe('StragglerPolicy', () => {
  it("flags an attempt only in the run's tail, past factor × p90, once enough attempts finished", async () => {
    const keys = keyspace();
    const policy = new StragglerPolicy(redis, keys, { cacheMs: 0 });
    await redis.hset(keys.run('r'), 'total', 100, 'done', 50);
    // Nine samples: not enough for a p90 yet.
    for (let i = 1; i <= 9; i++) await policy.record('r', i * 100);
    await redis.hset(keys.run('r'), 'done', 95);
    expect(await policy.isStraggler('r', 60_000)).toBe(false);
    await policy.record('r', 1_000);
    // p90 of 100..900 and 1000 (ten samples) = 1000 ms; 3 × p90 = 3 s.
    expect(await policy.isStraggler('r', 2_900)).toBe(false);
    expect(await policy.isStraggler('r', 3_100)).toBe(true);
    // Outside the tail (more than 10 % left), never.
    await redis.hset(keys.run('r'), 'done', 80);
    expect(await policy.isStraggler('r', 60_000)).toBe(false);
  });

  it('hands out exactly the budget (5 % of the run, at least one) to racing askers', async () => {
    const keys = keyspace();
    const policy = new StragglerPolicy(redis, keys, { cacheMs: 0 });
    await redis.hset(keys.run('r'), 'total', 60);
    const granted = await Promise.all(Array.from({ length: 20 }, () => policy.takeBudget('r')));
    expect(granted.filter(Boolean)).toHaveLength(3);
    await redis.hset(keys.run('small'), 'total', 4);
    const small = await Promise.all(Array.from({ length: 5 }, () => policy.takeBudget('small')));
    expect(small.filter(Boolean)).toHaveLength(1);
    expect(await redis.hget(keys.run('r'), 'backups')).toBe('3');
  });
});
