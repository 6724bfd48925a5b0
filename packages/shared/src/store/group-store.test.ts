/**
 * RL groups on real Redis: sizes fixed by registration (never counted twice, also under racing submitters),
 * the group-completed event exactly once per group whatever the order, duplication and concurrency of the
 * commits, membership recorded in results, rewards' mean and standard deviation, and resuming from a cursor.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewardStats } from '../contracts/group.js';
import { createRedis, type RedisClient } from '../redis/create-redis.js';
import type { EpisodeResult } from '../contracts/result.js';
import { rewardedResult } from '@rollout-fleet/test-kit/result-fixture';
import { seededRandom } from '@rollout-fleet/test-kit/seeded-random';
import { GroupStore } from './group-store.js';
import { createKeyspace, jobIdFor, type Keyspace } from './keys.js';
import { ResultStore } from './result-store.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function result(runId: string, episodeId: string, sample: number, reward: number | null): EpisodeResult {
  return rewardedResult({ run_id: runId, episode_id: episodeId, sample_index: sample }, reward);
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe('GroupStore', () => {
  let redis: RedisClient;
  const connections: RedisClient[] = [];
  let keys: Keyspace;

  beforeAll(() => {
    redis = createRedis(redisUrl);
    for (let i = 0; i < 4; i++) connections.push(createRedis(redisUrl));
    keys = createKeyspace(`{rf-test-${randomUUID()}}`);
  });
  afterAll(async () => {
    const found = await redis.keys(`rf:${keys.prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    for (const c of [redis, ...connections]) c.disconnect();
  });

  const jobs = (runId: string, episodeId: string, samples: number) =>
    Array.from({ length: samples }, (_, i) => ({ jobId: jobIdFor(runId, episodeId, i), episodeId }));

  it('fixes group sizes at registration, counting each job id once even when submitters race', async () => {
    const runId = `run-${randomUUID()}`;
    const all = [...jobs(runId, 'a', 8), ...jobs(runId, 'b', 3)];
    // Four submitters register overlapping halves of the same run at once, twice.
    const added = await Promise.all(
      connections.flatMap((c, i) => {
        const store = new GroupStore(c, keys);
        const part = i % 2 === 0 ? all.slice(0, 7) : all.slice(4);
        return [store.registerJobs(runId, part), store.registerJobs(runId, part)];
      }),
    );
    expect(added.reduce((a, b) => a + b, 0)).toBe(all.length);
    expect(await redis.hgetall(keys.groupSizes(runId))).toEqual({ a: '8', b: '3' });
    expect(await redis.scard(keys.runJobs(runId))).toBe(11);
    expect(await new GroupStore(redis, keys).counts(runId)).toEqual({ total: 2, completed: 0 });
  });

  it('emits a group once, when its last sample is stored, with rewards, mean and sample standard deviation', async () => {
    const runId = `run-${randomUUID()}`;
    const groups = new GroupStore(redis, keys);
    const results = new ResultStore(redis, keys);
    await groups.registerJobs(runId, jobs(runId, 'e', 4));
    const rewards = [1, 0, null, 1];
    for (const [i, reward] of rewards.entries()) {
      const outcome = await results.commit(result(runId, 'e', i, reward));
      expect(outcome.stored).toBe(true);
      // Only the commit that completes the group carries its event.
      expect(outcome.groupStreamId !== undefined).toBe(i === 3);
      expect(await groups.read(runId)).toHaveLength(i === 3 ? 1 : 0);
    }
    const [only] = await groups.read(runId);
    const event = only!.group;
    expect(event).toMatchObject({ run_id: runId, episode_id: 'e', instance_id: 'inst-e', size: 4, rewarded: 3 });
    expect(event.samples).toEqual([
      { sample_index: 0, status: 'completed', resolved: true, reward: 1 },
      { sample_index: 1, status: 'completed', resolved: false, reward: 0 },
      { sample_index: 2, status: 'failed', resolved: null, reward: null },
      { sample_index: 3, status: 'completed', resolved: true, reward: 1 },
    ]);
    // torch.std([1., 0., 1.]) = 0.5774 (Bessel-corrected); the failed sample has no reward and is left out.
    expect(event.reward_mean).toBeCloseTo(2 / 3, 12);
    expect(event.reward_std).toBeCloseTo(0.5773502691896258, 12);
    expect(event.results.map((r) => r.sample_index)).toEqual([0, 1, 2, 3]);
    expect(event.results.every((r) => r.group?.id === 'e' && r.group.size === 4)).toBe(true);
    expect(Date.parse(event.completed_at)).toBeGreaterThan(0);
    expect(await groups.counts(runId)).toEqual({ total: 1, completed: 1 });
  });

  it('emits every group exactly once under random orders, duplicate executions and racing committers (seeded)', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const random = seededRandom(seed);
      const runId = `run-${randomUUID()}`;
      const sizes = Array.from({ length: 6 }, () => 1 + Math.floor(random() * 5));
      await new GroupStore(redis, keys).registerJobs(
        runId,
        sizes.flatMap((size, g) => jobs(runId, `g${g}`, size)),
      );
      // Every sample committed one to three times (BullMQ may run a job more than once), spread over four connections.
      const commits = shuffle(
        sizes
          .flatMap((size, g) =>
            Array.from({ length: size }, (_, s) =>
              Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({ g, s })),
            ),
          )
          .flat(),
        random,
      );
      const outcomes = await Promise.all(
        commits.map(({ g, s }, i) =>
          new ResultStore(connections[i % connections.length] as RedisClient, keys).commit(
            result(runId, `g${g}`, s, Math.round(random())),
          ),
        ),
      );
      const total = sizes.reduce((a, b) => a + b, 0);
      expect(
        outcomes.filter((o) => o.stored),
        `seed ${seed}`,
      ).toHaveLength(total);
      expect(
        outcomes.filter((o) => o.groupStreamId !== undefined),
        `seed ${seed}`,
      ).toHaveLength(sizes.length);
      const events = await new GroupStore(redis, keys).read(runId);
      expect(events.map((e) => e.group.episode_id).sort(), `seed ${seed}`).toEqual(sizes.map((_, g) => `g${g}`).sort());
      for (const { group } of events)
        expect(group.samples, `seed ${seed}`).toHaveLength(sizes[Number(group.episode_id.slice(1))] as number);
      expect(await redis.hget(keys.run(runId), 'groups_completed')).toBe(String(sizes.length));
    }
  });

  it('follows groups as they complete and resumes after a cursor', async () => {
    const runId = `run-${randomUUID()}`;
    const groups = new GroupStore(redis, keys);
    const results = new ResultStore(redis, keys);
    await groups.registerJobs(runId, [...jobs(runId, 'x', 2), ...jobs(runId, 'y', 2)]);
    await results.commit(result(runId, 'x', 0, 1));
    await results.commit(result(runId, 'x', 1, 0));
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const item of groups.follow(runId, { signal: controller.signal, blockMs: 100 })) {
      seen.push(item.group.episode_id);
      if (seen.length === 1) {
        await results.commit(result(runId, 'y', 1, 1));
        await results.commit(result(runId, 'y', 0, 1));
      } else controller.abort();
    }
    expect(seen).toEqual(['x', 'y']);
    const [first] = await groups.read(runId);
    expect((await groups.read(runId, { after: first!.streamId })).map((g) => g.group.episode_id)).toEqual(['y']);
  });

  it('a forgotten sample (run again) holds its group back until its new result; an emitted group stays emitted', async () => {
    const runId = `run-${randomUUID()}`;
    const groups = new GroupStore(redis, keys);
    const results = new ResultStore(redis, keys);
    await groups.registerJobs(runId, [...jobs(runId, 'p', 2), ...jobs(runId, 'q', 1)]);
    await results.commit(result(runId, 'p', 0, 1));
    // Run again (as submit --force does): the result is retracted, its generation moves on.
    const p0 = (await results.retract({ runId, episodeId: 'p', sampleIndex: 0 })) as { generation: number };
    await groups.forgetSamples(runId, [{ episodeId: 'p', sampleIndex: 0 }]);
    expect((await results.commit(result(runId, 'p', 1, 1))).groupStreamId).toBeUndefined();
    expect(
      (await results.commit(result(runId, 'p', 0, 0), { generation: p0.generation, attemptsMade: 0 })).groupStreamId,
    ).toBeDefined();

    await results.commit(result(runId, 'q', 0, 1));
    const q0 = (await results.retract({ runId, episodeId: 'q', sampleIndex: 0 })) as { generation: number };
    await groups.forgetSamples(runId, [{ episodeId: 'q', sampleIndex: 0 }]);
    expect(
      (await results.commit(result(runId, 'q', 0, 0), { generation: q0.generation, attemptsMade: 0 })).groupStreamId,
    ).toBeUndefined();
    expect((await groups.read(runId)).map((g) => g.group.episode_id)).toEqual(['p', 'q']);
  });

  it('a retract alone (retry --failed, a dashboard re-run) takes the sample out of its group: the group waits for its new result', async () => {
    const runId = `run-${randomUUID()}`;
    const groups = new GroupStore(redis, keys);
    const results = new ResultStore(redis, keys);
    await groups.registerJobs(runId, jobs(runId, 'g', 2));
    await results.commit(result(runId, 'g', 0, null));
    // retry --failed and the processor's re-run retract without calling forgetSamples: the script does it.
    const g0 = (await results.retract({ runId, episodeId: 'g', sampleIndex: 0 })) as { generation: number };
    expect((await results.commit(result(runId, 'g', 1, 1))).groupStreamId).toBeUndefined();
    expect(await groups.read(runId)).toEqual([]);
    expect(
      (await results.commit(result(runId, 'g', 0, 0), { generation: g0.generation, attemptsMade: 0 })).groupStreamId,
    ).toBeDefined();
    const [event] = await groups.read(runId);
    expect(event?.group.samples.map((x) => [x.sample_index, x.reward])).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(await groups.counts(runId)).toEqual({ total: 1, completed: 1 });
  });

  it('leaves results of unregistered jobs without a group and emits nothing for them', async () => {
    const runId = `run-${randomUUID()}`;
    const results = new ResultStore(redis, keys);
    const outcome = await results.commit(result(runId, 'lone', 0, 1));
    expect(outcome.groupStreamId).toBeUndefined();
    expect((await results.get(runId, 'lone', 0))?.group).toBeUndefined();
    expect(await new GroupStore(redis, keys).read(runId)).toEqual([]);
  });

  it('computes reward statistics over the rewards that exist', () => {
    expect(rewardStats([])).toEqual({ rewarded: 0, mean: null, std: null });
    expect(rewardStats([null, null])).toEqual({ rewarded: 0, mean: null, std: null });
    expect(rewardStats([0.5, null])).toEqual({ rewarded: 1, mean: 0.5, std: null });
    // numpy.std([2, 4, 4, 4, 5, 5, 7, 9], ddof=1) = 2.138089935299395
    const stats = rewardStats([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(stats.mean).toBe(5);
    expect(stats.std).toBeCloseTo(2.138089935299395, 12);
  });
});
