/**
 * Run counters on real Redis: `getRunStatus` reads running / retrying / waiting from counters the workers keep,
 * a re-run after a stall takes an entry over, and the entries of a worker whose alive key expired are swept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKeyspace, createRedis, deleteKeysMatching, getRunStatus, type Keyspace, type RedisClient } from '@rollout-fleet/shared';
import { RunActivity } from './run-activity.js';

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

describe('RunActivity and getRunStatus', () => {
  it('counts running, retrying and waiting episodes of a run from counters', async () => {
    const keys = keyspace();
    await redis.hset(keys.run('r'), 'total', 5, 'done', 1);
    const a = new RunActivity(redis, keys, 'worker-a');
    await a.heartbeat(60_000);
    await a.start('r', 'r|e1|0');
    await a.start('r', 'r|e2|0');
    await a.start('other', 'other|e1|0');
    expect(await getRunStatus({ redis, keys, runId: 'r' })).toMatchObject({ total: 5, done: 1, active: 2, retrying: 0, waiting: 2 });
    await a.finish('r', 'r|e1|0', true);
    expect(await getRunStatus({ redis, keys, runId: 'r' })).toMatchObject({ active: 1, retrying: 1, waiting: 2 });
    // The retry starts (on any worker): no longer retrying.
    await a.start('r', 'r|e1|0');
    expect(await getRunStatus({ redis, keys, runId: 'r' })).toMatchObject({ active: 2, retrying: 0, waiting: 2 });
  });

  it('a re-run on another worker takes the entry over; the first worker finishing later does not remove it', async () => {
    const keys = keyspace();
    await redis.hset(keys.run('r'), 'total', 1);
    const [a, b] = [new RunActivity(redis, keys, 'a'), new RunActivity(redis, keys, 'b')];
    await a.start('r', 'r|e|0');
    await b.start('r', 'r|e|0');
    await a.finish('r', 'r|e|0', false);
    expect((await getRunStatus({ redis, keys, runId: 'r' })).active).toBe(1);
    await b.finish('r', 'r|e|0', false);
    expect((await getRunStatus({ redis, keys, runId: 'r' })).active).toBe(0);
  });

  it('sweeps the running entries of a worker whose alive key Redis expired, and only those', async () => {
    const keys = keyspace();
    await redis.hset(keys.run('r'), 'total', 4);
    const [alive, dead] = [new RunActivity(redis, keys, 'alive'), new RunActivity(redis, keys, 'dead')];
    await alive.heartbeat(60_000);
    await dead.heartbeat(150);
    await alive.start('r', 'r|e1|0');
    await dead.start('r', 'r|e2|0');
    await dead.start('r', 'r|e3|0');
    expect(await alive.sweep()).toBe(0);
    expect((await getRunStatus({ redis, keys, runId: 'r' })).active).toBe(3);
    await vi.waitFor(async () => expect(await redis.exists(keys.workerAlive('dead'))).toBe(0), { timeout: 5_000, interval: 20 });
    expect(await alive.sweep()).toBe(2);
    expect(await getRunStatus({ redis, keys, runId: 'r' })).toMatchObject({ active: 1, waiting: 3 });
    expect(await redis.hkeys(keys.activeJobs())).toEqual(['r|e1|0']);
  });
});
