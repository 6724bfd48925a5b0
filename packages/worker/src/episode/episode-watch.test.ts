/**
 * The watch checks many running episodes of several runs in one round trip: each episode is told about its own
 * generation and its own run's cancel flag, never a neighbour's.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutError } from '@rollout-fleet/shared';
import { createKeyspace, createLogger, createRedis, jobIdFor, type RedisClient } from '@rollout-fleet/shared';
import { EpisodeWatch } from './episode-watch.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('EpisodeWatch', () => {
  const keys = createKeyspace(`{rf-test-${randomUUID()}}`);
  let redis: RedisClient;

  beforeAll(() => {
    redis = createRedis(redisUrl);
  });
  afterAll(async () => {
    await redis.del(...['run-a', 'run-b', 'run-c'].flatMap((runId) => [keys.run(runId), keys.generations(runId)]));
    redis.disconnect();
  });

  it('stops exactly the superseded episodes and every episode of a cancelled run', async () => {
    const watch = new EpisodeWatch({
      redis,
      keys,
      logger: createLogger({ level: 'silent', format: 'json' }),
      intervalMs: 60_000,
    });
    const runs = ['run-a', 'run-b', 'run-c'];
    const tracked = runs
      .flatMap((runId) =>
        Array.from({ length: 5 }, (_, i) => ({ runId, episodeId: `e${i}`, sampleIndex: i % 2, generation: i % 3 })),
      )
      .map((episode) => ({ episode, handle: watch.track(episode) }));
    // Each episode's stored generation: its own, except e3 of run-a and e1 of run-b, which moved on.
    for (const { episode } of tracked) {
      const moved =
        (episode.runId === 'run-a' && episode.episodeId === 'e3') ||
        (episode.runId === 'run-b' && episode.episodeId === 'e1');
      const stored = episode.generation + (moved ? 1 : 0);
      if (stored > 0)
        await redis.hset(
          keys.generations(episode.runId),
          jobIdFor(episode.runId, episode.episodeId, episode.sampleIndex),
          String(stored),
        );
    }
    await redis.hset(keys.run('run-c'), 'cancelled', '1');
    await redis.hset(keys.run('run-a'), 'cancelled', '0');

    await watch.check();

    const stopped = tracked
      .filter(({ handle }) => handle.signal.aborted)
      .map(
        ({ episode, handle }) => `${episode.runId}/${episode.episodeId}:${(handle.signal.reason as RolloutError).code}`,
      );
    expect(stopped.sort()).toEqual(
      [
        'run-a/e3:SUPERSEDED',
        'run-b/e1:SUPERSEDED',
        ...Array.from({ length: 5 }, (_, i) => `run-c/e${i}:CANCELLED`),
      ].sort(),
    );
    watch.close();
  });
});
