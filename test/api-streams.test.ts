/**
 * The result and group streams over real HTTP and Redis: a client whose connection drops part-way resumes from
 * its last cursor and gets every result exactly once while results keep being committed; SSE resumes with
 * Last-Event-ID; every RL group is delivered exactly once — across duplicate commits, racing committers and
 * reconnects — with its rewards' mean and standard deviation; a followed stream keeps itself alive while idle
 * and ends with `finished` or `cancelled`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, ResultStore, type EpisodeResult, type RedisClient } from '@rollout-fleet/shared';
import { rewardedResult } from '@rollout-fleet/test-kit/result-fixture';
import { readNdjson, startTestApi, type TestApi } from './support/api-harness.js';

function result(runId: string, episodeId: string, sample: number, reward: number | null): EpisodeResult {
  return rewardedResult(
    { run_id: runId, episode_id: episodeId, sample_index: sample, finished_at: new Date().toISOString() },
    reward,
  );
}

const episodes = (ids: string[]) =>
  ids.map((id) => ({ episode_id: id, instance_id: `inst-${id}`, sandbox: { image: 'pyutils' } }));

describe('API streams', () => {
  let t: TestApi;
  const committers: RedisClient[] = [];

  beforeAll(async () => {
    t = await startTestApi({ streams: { blockMs: 100, keepAliveMs: 50 } });
    for (let i = 0; i < 3; i++) committers.push(createRedis(t.config.redis));
  });
  afterAll(async () => {
    for (const c of committers) c.disconnect();
    await t?.close();
  });

  async function submit(runId: string, ids: string[], samples: number): Promise<void> {
    const res = await t.call('/v1/runs', { method: 'POST', json: { run_id: runId, episodes: episodes(ids), samples } });
    expect(res.status).toBe(200);
  }

  const key = (line: Record<string, unknown>): string => {
    const r = line.result as EpisodeResult;
    return `${r.episode_id}#${r.sample_index}`;
  };

  it('resumes the results stream from the last cursor after a dropped connection: every result once, none missed', async () => {
    const runId = `r-${randomUUID()}`;
    const ids = Array.from({ length: 6 }, (_, i) => `e${i}`);
    await submit(runId, ids, 5);
    const all = ids.flatMap((id) => [0, 1, 2, 3, 4].map((s) => result(runId, id, s, s % 2)));
    const store = new ResultStore(t.pipeline.redis, t.pipeline.keys);
    for (const r of all.slice(0, 10)) await store.commit(r);
    const url = (after?: string) =>
      `${t.api.url}/v1/runs/${runId}/results?follow=true${after ? `&after=${after}` : ''}`;

    const seen: Array<Record<string, unknown>> = [];
    const first = await readNdjson(url(), { stopAfter: 7 });
    expect(first.dropped).toBe(true);
    seen.push(...first.lines);
    for (const r of all.slice(10, 20)) await store.commit(r);
    const second = await readNdjson(url(String(seen.at(-1)?.cursor)), { stopAfter: 8 });
    expect(second.dropped).toBe(true);
    seen.push(...second.lines);
    // The rest is committed while the third connection follows (duplicates included: they are counted, not streamed).
    let committing: Promise<unknown> | undefined;
    const third = await readNdjson(url(String(seen.at(-1)?.cursor)), {
      onLine: () => {
        committing ??= Promise.all(
          all
            .slice(20)
            .flatMap((r, i) =>
              [0, 1].map((n) => new ResultStore(committers[(i + n) % 3] as RedisClient, t.pipeline.keys).commit(r)),
            ),
        );
      },
    });
    await committing;
    expect(third.dropped).toBe(false);
    const end = third.lines.at(-1) as { end?: { reason: string; cursor: string } };
    seen.push(...third.lines.slice(0, -1));
    expect(end.end?.reason).toBe('finished');
    expect(seen.map(key)).toHaveLength(30);
    expect(new Set(seen.map(key)).size).toBe(30);
    expect(new Set(seen.map(key))).toEqual(new Set(all.map((r) => `${r.episode_id}#${r.sample_index}`)));
    // In stream order, and the end cursor is the last one.
    const cursors = seen.map((l) => String(l.cursor));
    expect([...cursors].sort(byStreamId)).toEqual(cursors);
    expect(end.end?.cursor).toBe(cursors.at(-1));
    expect(await t.pipeline.redis.hget(t.pipeline.keys.run(runId), 'duplicates')).toBe('10');
  });

  it('serves Server-Sent Events on request and resumes after Last-Event-ID', async () => {
    const runId = `r-${randomUUID()}`;
    await submit(runId, ['a', 'b', 'c', 'd'], 1);
    const store = new ResultStore(t.pipeline.redis, t.pipeline.keys);
    for (const id of ['a', 'b', 'c', 'd']) await store.commit(result(runId, id, 0, 1));
    const events = async (headers: Record<string, string>) => {
      const res = await t.call(`/v1/runs/${runId}/results`, { headers: { accept: 'text/event-stream', ...headers } });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      return (await res.text())
        .split('\n\n')
        .filter((block) => block.trim() !== '' && !block.startsWith(':'))
        .map(
          (block) =>
            Object.fromEntries(
              block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
            ) as Record<string, string>,
        );
    };
    const all = await events({});
    expect(all.map((e) => e.event)).toEqual(['result', 'result', 'result', 'result', 'end']);
    expect(all.slice(0, 4).map((e) => (JSON.parse(e.data as string) as EpisodeResult).episode_id)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    const rest = await events({ 'last-event-id': all[1]?.id as string });
    expect(rest.map((e) => e.id ?? 'end')).toEqual([all[2]?.id, all[3]?.id, 'end']);
    expect(JSON.parse(rest.at(-1)?.data as string)).toEqual({ reason: 'caught-up', cursor: all[3]?.id });
  });

  it('delivers every group exactly once with its rewards, across duplicate and racing commits and reconnects', async () => {
    const runId = `r-${randomUUID()}`;
    const ids = ['g0', 'g1', 'g2', 'g3', 'g4'];
    await submit(runId, ids, 3);
    const rewards: Record<string, Array<number | null>> = {
      g0: [1, 0, 1],
      g1: [0, 0, 0],
      g2: [1, null, 1],
      g3: [0.5, 1, 0],
      g4: [null, null, 1],
    };
    // Every sample executed twice (BullMQ may run a job twice), the executions racing on different connections.
    const commits = ids.flatMap((id) =>
      [0, 1, 2].flatMap((s) => {
        const once = result(runId, id, s, rewards[id]?.[s] ?? null);
        return [once, { ...once, worker_id: 'w2' }];
      }),
    );
    const racing = () =>
      Promise.all(commits.map((r, i) => new ResultStore(committers[i % 3] as RedisClient, t.pipeline.keys).commit(r)));

    const url = (after?: string) => `${t.api.url}/v1/runs/${runId}/groups?follow=true${after ? `&after=${after}` : ''}`;
    let committing: Promise<unknown> | undefined;
    const groups: Array<Record<string, unknown>> = [];
    let cursor: string | undefined;
    let ended: { reason: string } | undefined;
    // Reconnect after every group until the stream ends by itself.
    while (ended === undefined) {
      const read = await readNdjson(url(cursor), {
        stopAfter: 1,
        onKeepAlive: () => {
          committing ??= racing();
        },
      });
      for (const line of read.lines) {
        if (line.end) ended = line.end as { reason: string };
        else {
          groups.push(line.group as Record<string, unknown>);
          cursor = String(line.cursor);
        }
      }
    }
    await committing;
    expect(ended.reason).toBe('finished');
    expect(groups.map((g) => g.episode_id).sort()).toEqual(ids);
    const byId = Object.fromEntries(groups.map((g) => [g.episode_id as string, g]));
    for (const id of ids) {
      const group = byId[id] as { size: number; samples: Array<{ reward: number | null }>; results: unknown[] };
      expect(group.size).toBe(3);
      expect(group.results).toHaveLength(3);
      expect(group.samples.map((s) => s.reward)).toEqual(rewards[id]);
    }
    // Mean and sample standard deviation, as numpy.mean / numpy.std(ddof=1) give them.
    expect(byId.g0).toMatchObject({ reward_mean: 2 / 3, rewarded: 3 });
    expect(byId.g0?.reward_std).toBeCloseTo(0.5773502691896258, 12);
    expect(byId.g1).toMatchObject({ reward_mean: 0, reward_std: 0 });
    expect(byId.g2).toMatchObject({ reward_mean: 1, reward_std: 0, rewarded: 2 });
    expect(byId.g3?.reward_std).toBeCloseTo(0.5, 12);
    expect(byId.g4).toMatchObject({ reward_mean: 1, reward_std: null, rewarded: 1 });
    // Read again from the start: still one event per group, and the status agrees.
    const replay = await readNdjson(`${t.api.url}/v1/runs/${runId}/groups`);
    expect(replay.lines.filter((l) => l.group)).toHaveLength(5);
    expect(await (await t.call(`/v1/runs/${runId}`)).json()).toMatchObject({
      done: 15,
      duplicates: 15,
      groups: { total: 5, completed: 5 },
    });
  });

  it('ends a followed stream with "cancelled" when the run is cancelled', async () => {
    const runId = `r-${randomUUID()}`;
    await submit(runId, ['x', 'y'], 1);
    let cancelling: Promise<Response> | undefined;
    const read = await readNdjson(`${t.api.url}/v1/runs/${runId}/results?follow=true`, {
      onKeepAlive: () => {
        cancelling ??= t.call(`/v1/runs/${runId}/cancel`, { method: 'POST' });
      },
    });
    expect((await cancelling)?.status).toBe(200);
    expect(read.keepAlives).toBeGreaterThan(0);
    // A cancel gives every queued episode its result (failed, CANCELLED), so the follower sees each, then the end.
    const results = read.lines
      .filter((line) => !line.end)
      .map((line) => line.result as { episode_id: string; failure: { code: string } });
    expect(results.map((r) => [r.episode_id, r.failure.code]).sort()).toEqual([
      ['x', 'CANCELLED'],
      ['y', 'CANCELLED'],
    ]);
    expect(read.lines.at(-1)).toEqual({ end: { reason: 'cancelled', cursor: expect.any(String) } });
  });

  it('refuses a malformed cursor with a located problem', async () => {
    const runId = `r-${randomUUID()}`;
    await submit(runId, ['x'], 1);
    const res = await t.call(`/v1/runs/${runId}/results?after=yesterday`);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      error: { code: 'INPUT_INVALID', problems: [{ file: '(request)', field: 'after' }] },
    });
  });
});

function byStreamId(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am - bm || as - bs;
}
