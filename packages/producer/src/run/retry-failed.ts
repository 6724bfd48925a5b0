/**
 * Re-runs the episodes of a run whose current result is `failed` (infra that persisted, input, cancelled):
 * each is replaced as `submit --force` replaces (replace-episodes.ts), from the payload of its job — or, for
 * jobs a cancel took out of the queue, the payload the cancel parked. On a cancelled run this resumes it:
 * the cancel flag is cleared first, so the new jobs run.
 */
import type { Queue } from 'bullmq';
import {
  DEFAULT_JOB_POLICY,
  EpisodeSchema,
  ResultStore,
  type Episode,
  type EpisodeJobData,
  type JobPolicy,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { requireRun } from './known-run.js';
import { replaceEpisodes } from './replace-episodes.js';

export interface RetrySummary {
  /** Failed episodes enqueued again (running ones restarted included). */
  retried: number;
  /** Failed episodes whose payload is gone (job expired); submit the file again with --force. */
  missingPayload: number;
  /** The run was cancelled and is resumed by this retry. */
  resumed: boolean;
  /** How many of the retried episodes had been cancelled. */
  cancelled: number;
}

export async function retryFailed(options: {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  policy?: JobPolicy;
}): Promise<RetrySummary> {
  const { queue, redis, keys, runId } = options;
  await requireRun({ redis, keys, runId });
  const resumed = (await redis.hget(keys.run(runId), 'cancelled')) === '1';
  const index = await redis.hgetall(keys.resultIndex(runId));
  const store = new ResultStore(redis, keys);
  const episodes: Episode[] = [];
  let missingPayload = 0;
  let cancelled = 0;
  for (const [label, entry] of Object.entries(index)) {
    if (entry.split(' ')[1] !== 'failed') continue;
    const payload = (await queue.getJob(label))?.data ?? parkedPayload(await redis.hget(keys.parked(runId), label));
    const parsed = EpisodeSchema.safeParse(payload?.episode);
    if (!parsed.success) {
      missingPayload += 1;
      continue;
    }
    const [episodeId, sample] = label.split('|').slice(1);
    if ((await store.get(runId, episodeId ?? '', Number(sample)))?.failure?.code === 'CANCELLED') cancelled += 1;
    episodes.push(parsed.data);
  }
  if (resumed) await redis.hdel(keys.run(runId), 'cancelled');
  if (episodes.length > 0) {
    await replaceEpisodes({ queue, redis, keys, runId, episodes, policy: options.policy ?? DEFAULT_JOB_POLICY });
    await redis.hdel(keys.parked(runId), ...episodes.map((e) => `${runId}|${e.episode_id}|${e.sample_index}`));
  }
  // Repairs counters an older version left wrong; atomic with every commit and retract.
  await store.recount(runId);
  return { retried: episodes.length, missingPayload, resumed, cancelled };
}

function parkedPayload(raw: string | null): EpisodeJobData | undefined {
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as EpisodeJobData;
  } catch {
    return undefined;
  }
}
