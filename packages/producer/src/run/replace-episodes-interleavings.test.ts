/**
 * Force and retry against finishing workers, in random interleavings (seeded): executions are held before and
 * after their commit and released in random order while forces of random subsets run — awaited, left in flight
 * alongside others, or abandoned part-way as a killed producer is — and the fleet's sweep runs now and then.
 * However it goes, every episode ends with exactly one current result, from an execution of its latest
 * generation, the run's counters and stream agree, nothing is left pending and no job ran twice at once.
 * Real Redis and a real BullMQ worker.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { EventEmitter } from 'node:events';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EpisodeSchema,
  ResultStore,
  createKeyspace,
  createRedis,
  getRunStatus,
  requeuePendingReruns,
  type Episode,
  type EpisodeJobData,
  type RedisClient,
} from '@rollout-fleet/shared';
import { seededRandom } from '@rollout-fleet/test-kit/seeded-random';
import { startStandInWorker, type Execution } from '@rollout-fleet/test-kit/stand-in-worker';
import { submitRun } from './submit-run.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SEEDS = 30;
const EPISODES = 3;
const STEPS = 12;
/** A bound on waiting for the next thing to happen after a release (it always comes within milliseconds). */
const PROGRESS_TIMEOUT_MS = 10_000;

interface Held {
  execution: Execution;
  point: 'before-commit' | 'after-commit';
  open: () => void;
}

describe('replaceEpisodes: random interleavings of forces and finishing workers', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;
  let queue: Queue<EpisodeJobData>;
  let store: ResultStore;

  beforeAll(() => {
    redis = createRedis(redisUrl);
    queue = new Queue<EpisodeJobData>('episodes', { connection: { url: redisUrl }, prefix });
    store = new ResultStore(redis, keys);
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    const found = await redis.keys(`rf:${prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  /**
   * A queue whose `n`-th call never answers: the producer using it is stuck there for good, as if killed; `died`
   * settles then. A producer that makes fewer calls finishes normally.
   */
  function dyingAt(n: number): { queue: Queue<EpisodeJobData>; died: Promise<void> } {
    let calls = 0;
    let die: () => void = () => undefined;
    const died = new Promise<void>((resolve) => (die = resolve));
    const dying = new Proxy(queue, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls += 1;
          if (calls === n) {
            die();
            return new Promise(() => undefined);
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { queue: dying, died };
  }

  it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))(
    'seed %i: every episode ends with exactly one result',
    async (seed) => {
      const random = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
      const runId = `r-${seed}-${randomUUID()}`;
      const episodes: Episode[] = Array.from({ length: EPISODES }, (_, i) =>
        EpisodeSchema.parse({ run_id: runId, episode_id: `e${i}`, instance_id: `e${i}`, sandbox: { image: 'tiny' } }),
      );
      const labels = episodes.map((e) => `${runId}|${e.episode_id}|0`);
      const events = new EventEmitter();
      const held: Held[] = [];
      const generationOf = new Map<string, number>();
      let holding = true;
      const hold =
        (point: Held['point']) =>
        (execution: Execution): Promise<void> => {
          generationOf.set(`exec-${execution.serial}`, execution.generation);
          if (!holding) return Promise.resolve();
          return new Promise<void>((open) => {
            held.push({ execution, point, open });
            events.emit('progress');
          });
        };
      const standIn = startStandInWorker({
        redisUrl,
        prefix,
        redis,
        keys,
        concurrency: EPISODES,
        hooks: { beforeCommit: hold('before-commit'), afterCommit: hold('after-commit') },
      });
      standIn.worker.on('completed', () => events.emit('progress'));
      standIn.worker.on('failed', () => events.emit('progress'));
      const progressed = async (): Promise<void> => {
        await once(events, 'progress', { signal: AbortSignal.timeout(PROGRESS_TIMEOUT_MS) });
      };
      const inFlight: Array<Promise<unknown>> = [];
      try {
        const first = progressed();
        await submitRun({ queue, redis, keys, runId, episodes });
        await first;
        for (let step = 0; step < STEPS; step += 1) {
          const roll = random();
          if (roll < 0.4 && held.length > 0) {
            const [released] = held.splice(Math.floor(random() * held.length), 1);
            const next = progressed();
            released?.open();
            await next;
          } else if (roll < 0.75) {
            const subset = episodes.filter(() => random() < 0.6);
            const forced = subset.length > 0 ? subset : [pick(episodes)];
            const how = random();
            if (how < 0.2) {
              const producer = dyingAt(1 + Math.floor(random() * (2 * forced.length + 2)));
              inFlight.push(
                Promise.race([
                  submitRun({ queue: producer.queue, redis, keys, runId, episodes: forced, force: true }),
                  producer.died,
                ]),
              );
            } else if (how < 0.6)
              inFlight.push(submitRun({ queue, redis, keys, runId, episodes: forced, force: true }));
            else await submitRun({ queue, redis, keys, runId, episodes: forced, force: true });
          } else if (roll < 0.9) {
            await requeuePendingReruns({ queue, redis, keys });
          } else {
            await Promise.all(inFlight.splice(0));
          }
        }
        // Everything finishes now; the fleet's sweep keeps running (as it does every reaper interval).
        holding = false;
        for (const h of held.splice(0)) h.open();
        await Promise.all(inFlight.splice(0));
        await vi.waitFor(
          async () => {
            await requeuePendingReruns({ queue, redis, keys });
            for (const label of labels) expect(await queue.getJobState(label)).toBe('completed');
            for (const e of episodes) expect(await store.get(runId, e.episode_id, 0)).toBeDefined();
            expect(await redis.hmget(keys.reruns(), ...labels)).toEqual(labels.map(() => null));
          },
          { timeout: 20_000, interval: 50 },
        );

        expect((await redis.hkeys(keys.resultIndex(runId))).sort()).toEqual([...labels].sort());
        expect(await redis.xlen(keys.results(runId))).toBe(EPISODES);
        expect(await getRunStatus({ redis, keys, runId })).toMatchObject({
          total: EPISODES,
          done: EPISODES,
          completed: EPISODES,
          failed: 0,
        });
        expect(await store.recount(runId)).toEqual({
          done: EPISODES,
          completed: EPISODES,
          failed: 0,
          resolved: EPISODES,
        });
        for (const e of episodes) {
          const label = `${runId}|${e.episode_id}|0`;
          const result = await store.get(runId, e.episode_id, 0);
          // From an execution of the episode's latest generation: every force was followed by a run.
          expect(generationOf.get(result?.worker_id ?? '')).toBe(
            Number((await redis.hget(keys.generations(runId), label)) ?? 0),
          );
        }
        expect(standIn.overlaps).toEqual([]);
        expect(standIn.requeueErrors).toEqual([]);
      } finally {
        holding = false;
        for (const h of held.splice(0)) h.open();
        await standIn.close();
      }
    },
  );
});
