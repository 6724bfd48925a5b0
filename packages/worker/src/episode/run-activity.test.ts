/**
 * Run counters on real Redis: `getRunStatus` reads running / retrying / waiting from counters the workers keep,
 * a re-run after a stall takes an entry over, and the entries of a worker whose alive key expired are swept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createKeyspace,
  createRedis,
  deleteKeysMatching,
  getRunStatus,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
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
    expect(await getRunStatus({ redis, keys, runId: 'r' })).toMatchObject({
      total: 5,
      done: 1,
      active: 2,
      retrying: 0,
      waiting: 2,
    });
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

  it('randomized interleavings of start / finish / retry / sweep from four workers on their own connections keep the counters consistent', async () => {
    let seed = 977;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const keys = keyspace();
    const runs = ['r1', 'r2'];
    const jobsOf = (run: string): string[] => Array.from({ length: 6 }, (_, i) => `${run}|e${i}|0`);
    for (const run of runs) await redis.hset(keys.run(run), 'total', 6, 'done', 0);
    const connections = Array.from({ length: 4 }, () => createRedis(REDIS_URL));
    try {
      const workers = connections.map((c, i) => new RunActivity(c, keys, `w${i}`));
      for (const w of workers) await w.heartbeat(60_000);
      // w3 is dead from the start: its alive key is gone, so a sweep may drop its entries at any moment.
      await workers[3]!.leave();
      for (let round = 0; round < 40; round++) {
        const ops = Array.from({ length: 6 }, () => {
          const w = workers[Math.floor(random() * workers.length)]!;
          const run = runs[Math.floor(random() * runs.length)]!;
          const job = jobsOf(run)[Math.floor(random() * 6)]!;
          const dice = random();
          if (dice < 0.45) return w.start(run, job);
          if (dice < 0.9) return w.finish(run, job, random() < 0.5);
          return w.sweep();
        });
        await Promise.all(ops);
        // Every running entry is in both the run's hash and the fleet's index, under the same worker; nothing
        // runs and waits for a retry at once; the status adds up.
        const index = await redis.hgetall(keys.activeJobs());
        let fromRuns = 0;
        for (const run of runs) {
          const active = await redis.hgetall(keys.runActive(run));
          const retrying = new Set(await redis.smembers(keys.runRetrying(run)));
          fromRuns += Object.keys(active).length;
          for (const [job, worker] of Object.entries(active)) {
            expect(index[job]).toBe(`${worker}\t${run}`);
            expect(retrying.has(job)).toBe(false);
          }
          const status = await getRunStatus({ redis, keys, runId: run });
          expect(status.active).toBe(Object.keys(active).length);
          expect(status.active + status.retrying + status.waiting).toBe(6);
          expect(status.retrying).toBe(retrying.size);
        }
        expect(Object.keys(index)).toHaveLength(fromRuns);
      }
      // A final sweep leaves no entry of the dead worker.
      await workers[0]!.sweep();
      expect(Object.values(await redis.hgetall(keys.activeJobs())).filter((v) => v.startsWith('w3\t'))).toEqual([]);
    } finally {
      for (const c of connections) c.disconnect();
    }
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
    await vi.waitFor(async () => expect(await redis.exists(keys.workerAlive('dead'))).toBe(0), {
      timeout: 5_000,
      interval: 20,
    });
    expect(await alive.sweep()).toBe(2);
    expect(await getRunStatus({ redis, keys, runId: 'r' })).toMatchObject({ active: 1, waiting: 3 });
    expect(await redis.hkeys(keys.activeJobs())).toEqual(['r|e1|0']);
  });
});
