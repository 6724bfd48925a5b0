import { randomUUID } from 'node:crypto';
import { createRedis, type RedisClient } from '../redis/create-redis.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeResult } from '../contracts/result.js';
import { createKeyspace, jobIdFor, parseJobId } from './keys.js';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import { ResultStore } from './result-store.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function result(runId: string, episodeId: string, overrides: Partial<EpisodeResult> = {}): EpisodeResult {
  return resultFixture({ run_id: runId, episode_id: episodeId, worker_id: 'w1', ...overrides });
}

describe('ResultStore', () => {
  let redis: RedisClient;
  const keys = createKeyspace(`{rf-test-${randomUUID()}}`);

  beforeAll(() => {
    redis = createRedis(redisUrl);
  });
  afterAll(async () => {
    const found = await redis.keys(`rf:${keys.prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  it('stores the first commit and counts a second one as a duplicate', async () => {
    const store = new ResultStore(redis, keys);
    const runId = `run-${randomUUID()}`;
    const first = await store.commit(result(runId, 'e1'));
    const second = await store.commit(result(runId, 'e1', { worker_id: 'w2', resolved: false }));
    expect(first.stored).toBe(true);
    expect(first.streamId).toMatch(/^\d+-\d+$/);
    expect(second.stored).toBe(false);
    expect((await store.get(runId, 'e1', 0))?.worker_id).toBe('w1');
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({
      done: '1',
      completed: '1',
      resolved: '1',
      duplicates: '1',
    });
    expect(await redis.xlen(keys.results(runId))).toBe(1);
    expect(await redis.ttl(first.key)).toBeGreaterThan(0);
  });

  it('reads in completion order and resumes after a stream id', async () => {
    const store = new ResultStore(redis, keys);
    const runId = `run-${randomUUID()}`;
    for (const id of ['a', 'b', 'c']) await store.commit(result(runId, id));
    const all = await store.read(runId);
    expect(all.map((r) => r.result.episode_id)).toEqual(['a', 'b', 'c']);
    const rest = await store.read(runId, { after: all[0]!.streamId });
    expect(rest.map((r) => r.result.episode_id)).toEqual(['b', 'c']);
  });

  it('follows a run: yields the backlog, then results as they are committed', async () => {
    const store = new ResultStore(redis, keys);
    const runId = `run-${randomUUID()}`;
    await store.commit(result(runId, 'old'));
    const controller = new AbortController();
    const seen: string[] = [];
    const done = (async () => {
      for await (const item of store.follow(runId, { signal: controller.signal, blockMs: 100 })) {
        seen.push(item.result.episode_id);
        if (seen.length === 1)
          await store.commit(result(runId, 'new', { status: 'failed', resolved: null, reward: null }));
        if (seen.length === 2) controller.abort();
      }
    })();
    await done;
    expect(seen).toEqual(['old', 'new']);
    expect(await redis.hget(keys.run(runId), 'failed')).toBe('1');
  });

  it('derives job ids that BullMQ accepts and parses them back', () => {
    const id = jobIdFor('run/1', 'django__django-1', 3);
    expect(id).not.toContain(':');
    expect(parseJobId(id)).toEqual({ runId: 'run/1', episodeId: 'django__django-1', sampleIndex: 3 });
    expect(parseJobId('nope')).toBeUndefined();
  });
});
