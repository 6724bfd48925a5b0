/**
 * What sandboxes the fleet will need soon, for the warm pool: the spec of every enqueued job (its lookahead
 * reads the next waiting jobs' specs) and what a run announced it will submit next (an RL trainer knows the
 * next batch's instances while it trains on this one). Written by the producer, read by the workers.
 * Wire contract (Redis, all under the keyspace's hash tag):
 *   spec:<key>        string (TTL)  {"sandbox": SandboxSpec, "tools": ToolName[]} — what `key` stands for
 *   run-specs:<run>   hash (TTL)    job id → spec key, for the run's enqueued jobs
 *   announced:<run>   hash (TTL)    spec key → sandboxes announced; deleted when the run is submitted
 *   announced-runs    set           runs with an announcement (members whose hash expired are dropped on read)
 */
import type { Episode, SandboxSpec, ToolName } from '../contracts/episode.js';
import { specKey } from './spec-key.js';
import type { RedisClient } from '../redis/create-redis.js';
import { jobIdFor, type Keyspace } from './keys.js';

export interface SpecRecord {
  sandbox: SandboxSpec;
  tools: ToolName[];
}

const DAY_S = 24 * 60 * 60;

function specsOf(episodes: readonly Episode[]): Map<string, { record: SpecRecord; count: number }> {
  const specs = new Map<string, { record: SpecRecord; count: number }>();
  for (const episode of episodes) {
    const key = specKey(episode.sandbox, episode.tools);
    const entry = specs.get(key);
    if (entry) entry.count += 1;
    else specs.set(key, { record: { sandbox: episode.sandbox, tools: [...episode.tools] }, count: 1 });
  }
  return specs;
}

/** Records the spec of each enqueued job of a run (one pipeline). */
export async function recordRunSpecs(o: {
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  episodes: readonly Episode[];
  ttlS?: number;
}): Promise<void> {
  if (o.episodes.length === 0) return;
  const ttlS = o.ttlS ?? 14 * DAY_S;
  const specs = specsOf(o.episodes);
  const pipeline = o.redis.pipeline();
  for (const [key, { record }] of specs) pipeline.set(o.keys.spec(key), JSON.stringify(record), 'EX', ttlS);
  const fields: string[] = [];
  for (const episode of o.episodes)
    fields.push(jobIdFor(o.runId, episode.episode_id, episode.sample_index), specKey(episode.sandbox, episode.tools));
  pipeline.hset(o.keys.runSpecs(o.runId), ...fields);
  pipeline.expire(o.keys.runSpecs(o.runId), ttlS);
  await pipeline.exec();
}

/**
 * Announces the sandboxes a run will need (its episodes, not enqueued): warm pools may get them ready ahead.
 * Replaces an earlier announcement of the same run; lapses after `ttlS` if the run is never submitted.
 */
export async function announceDemand(o: {
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  episodes: readonly Episode[];
  ttlS?: number;
}): Promise<{ specs: number; sandboxes: number }> {
  const ttlS = o.ttlS ?? 3600;
  const specs = specsOf(o.episodes);
  const pipeline = o.redis.pipeline();
  pipeline.del(o.keys.announced(o.runId));
  for (const [key, { record, count }] of specs) {
    pipeline.set(o.keys.spec(key), JSON.stringify(record), 'EX', Math.max(ttlS, DAY_S));
    pipeline.hset(o.keys.announced(o.runId), key, count);
  }
  if (specs.size > 0) pipeline.expire(o.keys.announced(o.runId), ttlS);
  pipeline.sadd(o.keys.announcedRuns(), o.runId);
  await pipeline.exec();
  return { specs: specs.size, sandboxes: o.episodes.length };
}

/** The run was submitted: its jobs now speak for themselves (the lookahead sees them). */
export async function clearAnnouncement(o: { redis: RedisClient; keys: Keyspace; runId: string }): Promise<void> {
  await o.redis.multi().del(o.keys.announced(o.runId)).srem(o.keys.announcedRuns(), o.runId).exec();
}

/** Spec key → sandboxes wanted soon: the given waiting jobs' specs plus every live announcement. */
export async function readDemand(o: {
  redis: RedisClient;
  keys: Keyspace;
  waitingJobIds: readonly string[];
}): Promise<Map<string, number>> {
  const demand = new Map<string, number>();
  const add = (key: string | null | undefined, n: number): void => {
    if (key) demand.set(key, (demand.get(key) ?? 0) + n);
  };
  const byRun = new Map<string, string[]>();
  for (const jobId of o.waitingJobIds) {
    const runId = jobId.split('|')[0] ?? '';
    byRun.set(runId, [...(byRun.get(runId) ?? []), jobId]);
  }
  const runs = [...byRun.entries()];
  const [specLists, announcedRuns] = await Promise.all([
    Promise.all(runs.map(([runId, ids]) => o.redis.hmget(o.keys.runSpecs(runId), ...ids))),
    o.redis.smembers(o.keys.announcedRuns()),
  ]);
  for (const list of specLists) for (const key of list) add(key, 1);
  const announcements = await Promise.all(announcedRuns.map((runId) => o.redis.hgetall(o.keys.announced(runId))));
  const lapsed: string[] = [];
  announcements.forEach((counts, i) => {
    if (Object.keys(counts).length === 0) lapsed.push(announcedRuns[i] as string);
    for (const [key, n] of Object.entries(counts)) add(key, Number(n));
  });
  if (lapsed.length > 0) await o.redis.srem(o.keys.announcedRuns(), ...lapsed);
  return demand;
}

export async function readSpec(o: {
  redis: RedisClient;
  keys: Keyspace;
  specKey: string;
}): Promise<SpecRecord | undefined> {
  const raw = await o.redis.get(o.keys.spec(o.specKey));
  return raw === null ? undefined : (JSON.parse(raw) as SpecRecord);
}
