// The run fidelity aggregate against real Redis: exactly-once folding with racing readers (random interleavings of
// commits and folds), replaced results counted once, results that compared nothing left out.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fidelity } from '../contracts/fidelity.js';
import type { EpisodeResult } from '../contracts/result.js';
import { createRedis, type RedisClient } from '../redis/create-redis.js';
import { createKeyspace } from './keys.js';
import { ResultStore } from './result-store.js';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import { firstDivergenceBucket, foldRunFidelity, getRunFidelity, readRunFidelity } from './run-fidelity.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const keys = createKeyspace(`{rf-test-${randomUUID()}}`);
let redis: RedisClient;

beforeAll(() => {
  redis = createRedis(redisUrl);
});
afterAll(async () => {
  const found = await redis.keys(`rf:${keys.prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  redis.disconnect();
});

function fidelity(compared: number, firstDivergence: number | null): Fidelity {
  const differed = firstDivergence === null ? 0 : 1;
  return {
    rules_version: '1',
    compared,
    matched: compared - differed,
    differed,
    no_record: 0,
    first_divergence: firstDivergence,
    ratio: compared === 0 ? null : (compared - differed) / compared,
    steps: [],
  };
}

function result(runId: string, episodeId: string, fid: Fidelity | undefined): EpisodeResult {
  return resultFixture({
    run_id: runId,
    episode_id: episodeId,
    instance_id: episodeId,
    resolved: null,
    reward: null,
    ...(fid === undefined ? {} : { fidelity: fid }),
  });
}

/** A small deterministic PRNG, so a failing interleaving can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('run fidelity', () => {
  it('buckets the first divergent step', () => {
    expect([null, 0, 1, 2, 3, 4, 5, 9, 10, 19, 20, 49, 50, 400].map(firstDivergenceBucket)).toEqual([
      'none',
      '0',
      '1',
      '2',
      '3-4',
      '3-4',
      '5-9',
      '5-9',
      '10-19',
      '10-19',
      '20-49',
      '20-49',
      '50+',
      '50+',
    ]);
  });

  it('counts clean episodes, first divergences and steps; results that compared nothing are not replays', async () => {
    const runId = `run-${randomUUID()}`;
    const store = new ResultStore(redis, keys);
    await store.commit(result(runId, 'a', fidelity(5, null)));
    await store.commit(result(runId, 'b', fidelity(4, 2)));
    await store.commit(result(runId, 'c', fidelity(3, 0)));
    await store.commit(result(runId, 'd', undefined));
    await store.commit(result(runId, 'e', fidelity(0, null)));
    const figure = await getRunFidelity(redis, keys, runId);
    expect(figure).toMatchObject({ replayed: 3, clean: 1, stepsCompared: 12, stepsMatched: 10 });
    expect(figure.cleanShare).toBeCloseTo(1 / 3);
    expect(figure.firstDivergence).toMatchObject({ none: 1, '0': 1, '2': 1, '1': 0 });
    // Reading again folds nothing new.
    expect(await getRunFidelity(redis, keys, runId)).toEqual(figure);
  });

  it('a replaced result (retracted and run again) counts once, with its new figure', async () => {
    const runId = `run-${randomUUID()}`;
    const store = new ResultStore(redis, keys);
    await store.commit(result(runId, 'a', fidelity(4, 1)));
    expect((await getRunFidelity(redis, keys, runId)).firstDivergence['1']).toBe(1);
    const { generation } = (await store.retract({ runId, episodeId: 'a', sampleIndex: 0 })) as { generation: number };
    await store.commit(result(runId, 'a', fidelity(4, null)), { generation, attemptsMade: 0 });
    const figure = await getRunFidelity(redis, keys, runId);
    expect(figure).toMatchObject({ replayed: 1, clean: 1, stepsCompared: 4, stepsMatched: 4 });
    expect(figure.firstDivergence['1']).toBe(0);
  });

  it('racing readers fold every result exactly once, whatever the interleaving of commits and folds', async () => {
    for (const seed of [1, 7, 42, 1234]) {
      const random = prng(seed);
      const runId = `run-${seed}-${randomUUID()}`;
      const store = new ResultStore(redis, keys);
      // Several connections, as several dashboards and CLIs would have.
      const readers = Array.from({ length: 4 }, () => createRedis(redisUrl));
      const truth = { replayed: 0, clean: 0, steps: 0, matched: 0 };
      const work: Array<Promise<unknown>> = [];
      for (let i = 0; i < 60; i += 1) {
        const compared = 1 + Math.floor(random() * 6);
        const first = random() < 0.4 ? null : Math.floor(random() * compared);
        truth.replayed += 1;
        truth.clean += first === null ? 1 : 0;
        truth.steps += compared;
        truth.matched += compared - (first === null ? 0 : 1);
        work.push(store.commit(result(runId, `e${i}`, fidelity(compared, first))));
        if (random() < 0.5) work.push(foldRunFidelity(readers[Math.floor(random() * readers.length)]!, keys, runId));
      }
      await Promise.all(work);
      await Promise.all(readers.map((reader) => foldRunFidelity(reader, keys, runId)));
      const figure = await readRunFidelity(redis, keys, runId);
      expect({
        seed,
        replayed: figure.replayed,
        clean: figure.clean,
        steps: figure.stepsCompared,
        matched: figure.stepsMatched,
      }).toEqual({ seed, ...truth });
      for (const reader of readers) reader.disconnect();
    }
  });
});
