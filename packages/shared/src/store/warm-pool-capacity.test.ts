// What producers read of the fleet's warm pools from the workers' metrics snapshots (real Redis): only live workers
// count (a dead worker's snapshot may linger until the dashboard drops it), and a worker whose snapshot does not
// carry the gauge (an older version, mid rolling upgrade) may keep a pool, so it never earns a warning.
// The snapshots from a real worker are covered by test/announce-warm-pool.e2e.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type RedisClient } from '../redis/create-redis.js';
import { createKeyspace, type Keyspace } from './keys.js';
import { WARM_POOL_MAX_METRIC, announcementWarning, readWarmPoolCapacity } from './warm-pool-capacity.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: RedisClient;
const prefixes: Keyspace[] = [];

beforeAll(() => {
  redis = createRedis(redisUrl);
});
afterAll(async () => {
  for (const keys of prefixes) {
    const found = await redis.keys(`rf:${keys.prefix}:*`);
    if (found.length > 0) await redis.del(...found);
  }
  redis.disconnect();
});

/** A worker's snapshot as `publishMetrics` writes it (prom-client's getMetricsAsJSON), and its heartbeat if alive. */
async function worker(keys: Keyspace, id: string, o: { warmPoolMax?: number; alive: boolean }): Promise<void> {
  const metrics = [
    { name: 'rf_live_sandboxes', help: 'h', type: 'gauge', values: [{ value: 3, labels: {} }], aggregator: 'sum' },
    ...(o.warmPoolMax === undefined
      ? []
      : [
          {
            name: WARM_POOL_MAX_METRIC,
            help: 'h',
            type: 'gauge',
            values: [{ value: o.warmPoolMax, labels: {} }],
            aggregator: 'max',
          },
        ]),
  ];
  await redis.hset(keys.metrics(), id, JSON.stringify({ at: Date.now(), metrics }));
  if (o.alive) await redis.set(keys.workerAlive(id), '1', 'PX', 30_000);
}

function fleet(): Keyspace {
  const keys = createKeyspace(`{rf-test-${randomUUID()}}`);
  prefixes.push(keys);
  return keys;
}

describe('readWarmPoolCapacity / announcementWarning', () => {
  it('no worker, or only dead ones: "no worker is running", whatever the dead ones kept', async () => {
    const keys = fleet();
    expect(await readWarmPoolCapacity({ redis, keys })).toEqual({
      liveWorkers: 0,
      warmWorkers: 0,
      unknownWorkers: 0,
      warmPoolMax: 0,
    });
    await worker(keys, 'dead', { warmPoolMax: 8, alive: false });
    const capacity = await readWarmPoolCapacity({ redis, keys });
    expect(capacity).toEqual({ liveWorkers: 0, warmWorkers: 0, unknownWorkers: 0, warmPoolMax: 0 });
    expect(announcementWarning(capacity)).toMatch(/^no worker is running: the announcement waits for one/);
  });

  it('live workers all at RF_WARM_POOL_MAX=0: "none of the N keeps a warm pool"; one with a pool: no warning, its bound', async () => {
    const keys = fleet();
    await worker(keys, 'a', { warmPoolMax: 0, alive: true });
    await worker(keys, 'b', { warmPoolMax: 0, alive: true });
    await worker(keys, 'dead', { warmPoolMax: 8, alive: false });
    const none = await readWarmPoolCapacity({ redis, keys });
    expect(none).toEqual({ liveWorkers: 2, warmWorkers: 0, unknownWorkers: 0, warmPoolMax: 0 });
    expect(announcementWarning(none)).toBe(
      'none of the 2 live worker(s) keeps a warm pool (RF_WARM_POOL_MAX=0): nothing will be pre-warmed; set RF_WARM_POOL_MAX on the workers',
    );
    await worker(keys, 'c', { warmPoolMax: 16, alive: true });
    const some = await readWarmPoolCapacity({ redis, keys });
    expect(some).toEqual({ liveWorkers: 3, warmWorkers: 1, unknownWorkers: 0, warmPoolMax: 16 });
    expect(announcementWarning(some)).toBeUndefined();
  });

  it('a live worker whose snapshot does not say (older version, unreadable snapshot): no warning', async () => {
    const keys = fleet();
    await worker(keys, 'a', { warmPoolMax: 0, alive: true });
    await worker(keys, 'old', { alive: true });
    const capacity = await readWarmPoolCapacity({ redis, keys });
    expect(capacity).toEqual({ liveWorkers: 2, warmWorkers: 0, unknownWorkers: 1, warmPoolMax: 0 });
    expect(announcementWarning(capacity)).toBeUndefined();
    await redis.hset(keys.metrics(), 'old', 'not json');
    expect(await readWarmPoolCapacity({ redis, keys })).toMatchObject({ liveWorkers: 2, unknownWorkers: 1 });
  });
});
