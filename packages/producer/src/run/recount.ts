import { EpisodeResultSchema, type Keyspace, parseJobId, type RedisClient } from '@rollout-fleet/shared';

const CHUNK = 1000;

/**
 * Rebuilds a run's counters from its stored results. The counters are normally kept by the result
 * commit script; after results were deleted (force, retry) they are recomputed from the source of truth.
 */
export async function recountRun(redis: RedisClient, keys: Keyspace, runId: string): Promise<Record<string, number>> {
  const ids = await redis.smembers(keys.runJobs(runId));
  const counts = { done: 0, completed: 0, failed: 0, resolved: 0 };
  for (let i = 0; i < ids.length; i += CHUNK) {
    const resultKeys = ids.slice(i, i + CHUNK).flatMap((id) => {
      const parsed = parseJobId(id);
      return parsed ? [keys.result(parsed.runId, parsed.episodeId, parsed.sampleIndex)] : [];
    });
    if (resultKeys.length === 0) continue;
    for (const raw of await redis.mget(...resultKeys)) {
      if (raw === null) continue;
      const result = EpisodeResultSchema.parse(JSON.parse(raw));
      counts.done += 1;
      counts[result.status] += 1;
      if (result.resolved === true) counts.resolved += 1;
    }
  }
  await redis.hset(keys.run(runId), counts);
  return counts;
}
