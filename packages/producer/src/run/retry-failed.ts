import type { Queue } from 'bullmq';
import { type EpisodeJobData, EpisodeResultSchema, type JobPolicy, type Keyspace, parseJobId, type RedisClient } from '@rollout-fleet/shared';
import { recountRun } from './recount.js';
import { submitRun } from './submit-run.js';

/**
 * Re-runs the episodes of a run whose stored result is `failed` (infra exhausted, input). Their results
 * are deleted and the episodes enqueued again from the payload of their previous job.
 */
export async function retryFailed(options: {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  policy?: JobPolicy;
}): Promise<{ retried: number; missingPayload: number }> {
  const { queue, redis, keys, runId } = options;
  const ids = await redis.smembers(keys.runJobs(runId));
  const episodes: EpisodeJobData['episode'][] = [];
  let missingPayload = 0;
  for (const id of ids) {
    const parsed = parseJobId(id);
    if (!parsed) continue;
    const raw = await redis.get(keys.result(parsed.runId, parsed.episodeId, parsed.sampleIndex));
    if (raw === null || EpisodeResultSchema.parse(JSON.parse(raw)).status !== 'failed') continue;
    const job = await queue.getJob(id);
    if (!job) {
      missingPayload += 1;
      continue;
    }
    episodes.push(job.data.episode);
  }
  await redis.hdel(keys.run(runId), 'cancelled');
  if (episodes.length > 0) {
    await submitRun({ queue, redis, keys, runId, episodes, force: true, ...(options.policy ? { policy: options.policy } : {}) });
  }
  await recountRun(redis, keys, runId);
  return { retried: episodes.length, missingPayload };
}
