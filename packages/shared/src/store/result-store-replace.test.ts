/**
 * One true result per episode (issue #9 items 3–5) at the store level, on real Redis: generations fence
 * stale executions, a retract + commit replaces a result for every reader (one stream line per episode, from
 * the start or from a cursor), counters always equal the results — also with commits, retracts and recounts
 * racing on separate connections in a randomized interleaving.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeResult } from '../contracts/result.js';
import { createRedis, type RedisClient } from '../redis/create-redis.js';
import { createKeyspace, jobIdFor } from './keys.js';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import { ResultStore, type StreamedResult } from './result-store.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function result(runId: string, episodeId: string, overrides: Partial<EpisodeResult> = {}): EpisodeResult {
  return resultFixture({ run_id: runId, episode_id: episodeId, worker_id: 'w1', ...overrides });
}

const failedResult = (runId: string, id: string): EpisodeResult =>
  result(runId, id, {
    status: 'failed',
    resolved: null,
    reward: null,
    failure: { code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' },
  });

async function drain(store: ResultStore, runId: string, after = '0'): Promise<StreamedResult[]> {
  const out: StreamedResult[] = [];
  for (let cursor = after; ;) {
    const page = await store.page(runId, cursor, 7);
    out.push(...page.items);
    if (page.cursor === undefined) return out;
    cursor = page.cursor;
  }
}

describe('ResultStore: replace, generations, counters', () => {
  const keys = createKeyspace(`{rf-test-${randomUUID()}}`);
  let redis: RedisClient;
  let store: ResultStore;

  beforeAll(() => {
    redis = createRedis(redisUrl);
    store = new ResultStore(redis, keys);
  });
  afterAll(async () => {
    const found = await redis.keys(`rf:${keys.prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  it('fences by generation: a duplicate of the same generation and a stale one of an older generation store nothing', async () => {
    const runId = `run-${randomUUID()}`;
    const ref = { runId, episodeId: 'e1', sampleIndex: 0 };
    expect(await store.commit(failedResult(runId, 'e1'), { generation: 0, attemptsMade: 2 })).toMatchObject({
      stored: true,
      reason: 'stored',
    });
    expect(await store.commit(result(runId, 'e1'), { generation: 0, attemptsMade: 2 })).toMatchObject({
      stored: false,
      reason: 'duplicate',
    });
    expect(await store.state(ref)).toMatchObject({
      generation: 0,
      current: { status: 'failed', resolved: null, attemptsMade: 2 },
    });

    const retracted = await store.retract(ref);
    expect(retracted).toMatchObject({
      retracted: true,
      generation: 1,
      previous: { status: 'failed', failure: { code: 'SANDBOX_DEAD' } },
    });
    // An execution that started before the retract (generation 0) can no longer commit.
    expect(
      await store.commit(result(runId, 'e1', { worker_id: 'zombie' }), { generation: 0, attemptsMade: 0 }),
    ).toMatchObject({ stored: false, reason: 'stale' });
    expect(
      await store.commit(result(runId, 'e1', { worker_id: 'new' }), { generation: 1, attemptsMade: 0 }),
    ).toMatchObject({ stored: true });
    expect((await store.get(runId, 'e1', 0))?.worker_id).toBe('new');
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({
      done: '1',
      completed: '1',
      failed: '0',
      resolved: '1',
      duplicates: '1',
      stale: '1',
    });
  });

  it('a retract that expects another current result changes nothing', async () => {
    const runId = `run-${randomUUID()}`;
    const ref = { runId, episodeId: 'e1', sampleIndex: 0 };
    await store.commit(result(runId, 'e1'));
    expect(await store.retract(ref, { expectedStreamId: '1-1' })).toEqual({ conflict: true });
    expect(await store.state(ref)).toMatchObject({ generation: 0, current: { status: 'completed' } });
  });

  it('one line per episode for every reader: from the start, from a cursor, and from a cursor whose line was replaced', async () => {
    const runId = `run-${randomUUID()}`;
    for (const id of ['a', 'b', 'c']) await store.commit(failedResult(runId, id));
    const first = await drain(store, runId);
    expect(first.map((r) => r.result.episode_id)).toEqual(['a', 'b', 'c']);
    const cursorAfterAll = first[2]!.streamId;
    const cursorAtB = first[1]!.streamId;

    // Retry b (a forced re-run): retract, then the new execution commits in the next generation.
    const { generation } = (await store.retract({ runId, episodeId: 'b', sampleIndex: 0 })) as { generation: number };
    expect(await drain(store, runId)).toHaveLength(2);
    await store.commit(result(runId, 'b', { worker_id: 'again' }), { generation, attemptsMade: 0 });

    const fromStart = await drain(store, runId);
    expect(fromStart.map((r) => `${r.result.episode_id}:${r.result.status}`)).toEqual([
      'a:failed',
      'c:failed',
      'b:completed',
    ]);
    expect(await redis.xlen(keys.results(runId))).toBe(3);
    // A reader that had read everything resumes with exactly the replacement.
    expect((await drain(store, runId, cursorAfterAll)).map((r) => r.result.worker_id)).toEqual(['again']);
    // A checkpoint at the replaced line itself still resumes exactly after it.
    expect((await drain(store, runId, cursorAtB)).map((r) => r.result.episode_id)).toEqual(['c', 'b']);
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({
      done: '3',
      completed: '1',
      failed: '2',
      resolved: '1',
    });
  });

  it('follow starts after its cursor, then yields what is committed next', async () => {
    const runId = `run-${randomUUID()}`;
    const ids: string[] = [];
    for (const id of ['a', 'b', 'c']) ids.push((await store.commit(result(runId, id))).streamId!);
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const item of store.follow(runId, { after: ids[0], signal: controller.signal, blockMs: 100 })) {
      seen.push(item.result.episode_id);
      if (seen.length === 2) await store.commit(result(runId, 'd'));
      if (seen.length === 3) controller.abort();
    }
    expect(seen).toEqual(['b', 'c', 'd']);
  });

  it('a pending re-run is recorded with the retract and cleared when an execution begins or a result is stored', async () => {
    const runId = `run-${randomUUID()}`;
    const label = jobIdFor(runId, 'e1', 0);
    const ref = { runId, episodeId: 'e1', sampleIndex: 0 };
    expect(await store.commit(result(runId, 'e1'))).toMatchObject({ stored: true });
    expect(await store.retract(ref, { rerun: '{"job":1}' })).toMatchObject({ retracted: true, generation: 1 });
    expect(await redis.hget(keys.reruns(), label)).toBe('{"job":1}');
    // A failed job settled after the fact may have run before the force: refused while the re-run is pending.
    expect(
      await store.commit(failedResult(runId, 'e1'), { generation: 1, attemptsMade: 0, afterTheFact: true }),
    ).toMatchObject({ stored: false, reason: 'stale' });
    // An execution begins in the forced generation: the re-run is under way, so nothing is pending any more.
    expect(await store.begin(ref)).toEqual({ generation: 1, current: null });
    expect(await redis.hexists(keys.reruns(), label)).toBe(0);
    expect(
      await store.commit(failedResult(runId, 'e1'), { generation: 1, attemptsMade: 0, afterTheFact: true }),
    ).toMatchObject({ stored: true });

    // A stored result of the forced generation clears it too (a commit without a begin: cancel, tests).
    expect(await store.retract(ref, { rerun: '{"job":2}' })).toMatchObject({ retracted: true, generation: 2 });
    expect(await store.commit(result(runId, 'e1'), { generation: 1, attemptsMade: 0 })).toMatchObject({
      reason: 'stale',
    });
    expect(await redis.hexists(keys.reruns(), label)).toBe(1);
    expect(await store.commit(result(runId, 'e1'), { generation: 2, attemptsMade: 0 })).toMatchObject({ stored: true });
    expect(await redis.hexists(keys.reruns(), label)).toBe(0);
    // A retract without a re-run (the processor's own, for a job re-run from the dashboard) records none.
    await store.retract(ref);
    expect(await redis.hexists(keys.reruns(), label)).toBe(0);
  });

  it('a failure settled after the fact is refused once another job instance has begun an execution, even with nothing pending', async () => {
    const runId = `run-${randomUUID()}`;
    const label = jobIdFor(runId, 'e1', 0);
    const ref = { runId, episodeId: 'e1', sampleIndex: 0 };
    // Job instance A begins, its result is stored; a force takes it out and its re-run (instance B) begins.
    expect(await store.begin(ref, 'A')).toEqual({ generation: 0, current: null });
    expect(await store.commit(result(runId, 'e1'), { generation: 0, attemptsMade: 0 })).toMatchObject({ stored: true });
    await store.retract(ref, { rerun: '{"job":1}' });
    expect(await store.begin(ref, 'B')).toEqual({ generation: 1, current: null });
    expect(await redis.hget(keys.began(runId), label)).toBe('B');
    // A's failed event, settled late, reads the new generation: it is still not the re-run's result.
    expect(
      await store.commit(failedResult(runId, 'e1'), {
        generation: 1,
        attemptsMade: 0,
        afterTheFact: true,
        execution: 'A',
      }),
    ).toMatchObject({ stored: false, reason: 'stale' });
    // B's own failure settled after the fact (it stalled out) is.
    expect(
      await store.commit(failedResult(runId, 'e1'), {
        generation: 1,
        attemptsMade: 0,
        afterTheFact: true,
        execution: 'B',
      }),
    ).toMatchObject({ stored: true });
  });

  it('recount rebuilds every counter from the results, resolved included', async () => {
    const runId = `run-${randomUUID()}`;
    await store.commit(result(runId, 'r1'));
    await store.commit(result(runId, 'r2'));
    await store.commit(result(runId, 'u1', { resolved: false, reward: 0 }));
    await store.commit(failedResult(runId, 'f1'));
    await redis.hset(keys.run(runId), { done: 99, completed: 0, failed: 7, resolved: 0 });
    expect(await store.recount(runId)).toEqual({ done: 4, completed: 3, failed: 1, resolved: 2 });
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({
      done: '4',
      completed: '3',
      failed: '1',
      resolved: '2',
    });
  });

  it('counters equal the results when commits, retracts and recounts race on three connections (randomized)', async () => {
    const seed = Number(process.env.RF_TEST_SEED ?? 9091);
    let state = seed;
    const random = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const runId = `run-${randomUUID()}`;
    const connections = [createRedis(redisUrl), createRedis(redisUrl), createRedis(redisUrl)];
    const stores = connections.map((c) => new ResultStore(c, keys));
    const episodes = Array.from({ length: 30 }, (_, i) => `e${i}`);
    try {
      const committer = async (s: ResultStore): Promise<void> => {
        for (let i = 0; i < 150; i++) {
          const id = episodes[Math.floor(random() * episodes.length)] as string;
          const { generation } = await s.state({ runId, episodeId: id, sampleIndex: 0 });
          const roll = random();
          const r =
            roll < 0.4
              ? result(runId, id)
              : roll < 0.7
                ? result(runId, id, { resolved: false, reward: 0 })
                : failedResult(runId, id);
          await s.commit(r, { generation, attemptsMade: 0 });
        }
      };
      const retracter = async (s: ResultStore): Promise<void> => {
        for (let i = 0; i < 60; i++)
          await s.retract({
            runId,
            episodeId: episodes[Math.floor(random() * episodes.length)] as string,
            sampleIndex: 0,
          });
      };
      const recounter = async (s: ResultStore): Promise<void> => {
        for (let i = 0; i < 40; i++) await s.recount(runId);
      };
      await Promise.all([committer(stores[0]!), committer(stores[1]!), retracter(stores[2]!), recounter(stores[2]!)]);
      const current = await drain(store, runId);
      const labels = current.map((r) => jobIdFor(runId, r.result.episode_id, 0));
      expect(new Set(labels).size).toBe(labels.length);
      expect(await redis.hlen(keys.resultIndex(runId))).toBe(current.length);
      expect(await redis.xlen(keys.results(runId))).toBe(current.length);
      const expected = {
        done: String(current.length),
        completed: String(current.filter((r) => r.result.status === 'completed').length),
        failed: String(current.filter((r) => r.result.status === 'failed').length),
        resolved: String(current.filter((r) => r.result.resolved === true).length),
      };
      expect(await redis.hgetall(keys.run(runId)), `seed ${seed}`).toMatchObject(expected);
    } finally {
      for (const c of connections) c.disconnect();
    }
  });
});
