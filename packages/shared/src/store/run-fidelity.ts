/**
 * A run's replay fidelity: the share of replayed episodes without any divergent step, and where the first
 * divergence happens (bucketed step index), for `status`, the run page and /metrics.
 *
 * Derived from the run's results stream — the durable record — by folding each result in once: readers move
 * a cursor over the stream with one compare-and-set script (run-fidelity.lua), so any number of readers (CLI,
 * dashboards) may fold concurrently and every entry counts exactly once; a crash between two folds loses nothing
 * (the next reader folds from the cursor). Per episode only its latest result counts (a replaced result gives
 * back its old counts). Results that compared nothing (no recorded observations, policy episodes, failures)
 * are not replays and are left out of the shares.
 */
import { LuaScript } from '../redis/lua-script.js';
import type { EpisodeResult } from '../contracts/result.js';
import type { RedisClient } from '../redis/create-redis.js';
import type { Keyspace } from './keys.js';
import { ResultStore } from './result-store.js';

const FOLD_SCRIPT = LuaScript.load(new URL('./run-fidelity.lua', import.meta.url));
const DAY_S = 24 * 60 * 60;
const BATCH = 500;

/** First-divergence buckets (step index, 0-based), in display order; `none` = replayed without divergence. */
export const FIRST_DIVERGENCE_BUCKETS = ['none', '0', '1', '2', '3-4', '5-9', '10-19', '20-49', '50+'] as const;
export type FirstDivergenceBucket = (typeof FIRST_DIVERGENCE_BUCKETS)[number];

export function firstDivergenceBucket(index: number | null): FirstDivergenceBucket {
  if (index === null) return 'none';
  if (index <= 2) return String(index) as FirstDivergenceBucket;
  if (index <= 4) return '3-4';
  if (index <= 9) return '5-9';
  if (index <= 19) return '10-19';
  if (index <= 49) return '20-49';
  return '50+';
}

export interface RunFidelity {
  /** Episodes whose latest result compared at least one recorded observation. */
  replayed: number;
  /** …of which no step differed. */
  clean: number;
  /** clean / replayed; null before the first replayed result. */
  cleanShare: number | null;
  /** Episodes by the bucket of their first divergent step (`none` = clean). */
  firstDivergence: Record<FirstDivergenceBucket, number>;
  stepsCompared: number;
  stepsMatched: number;
  /** stepsMatched / stepsCompared; null when nothing was compared. */
  stepRatio: number | null;
}

/** What one result contributes: undefined when it compared nothing. */
function contribution(result: EpisodeResult): string | undefined {
  const fidelity = result.fidelity;
  if (fidelity === undefined || fidelity.compared === 0) return undefined;
  return `${firstDivergenceBucket(fidelity.first_divergence)}|${fidelity.compared}|${fidelity.matched}`;
}

function labelOf(result: EpisodeResult): string {
  return `${result.episode_id}|${result.sample_index}`;
}

/** Folds the results committed since the last fold into the aggregate (loops until the cursor is current). */
export async function foldRunFidelity(
  redis: RedisClient,
  keys: Keyspace,
  runId: string,
  options: { retentionS?: number } = {},
): Promise<void> {
  const store = new ResultStore(redis, keys);
  const retention = String(Math.max(1, Math.round(options.retentionS ?? 14 * DAY_S)));
  for (;;) {
    const cursor = (await redis.hget(keys.runFidelity(runId), 'cursor')) ?? '0';
    const entries = await redis.xrange(keys.results(runId), cursor === '0' ? '-' : `(${cursor}`, '+', 'COUNT', BATCH);
    if (entries.length === 0) return;
    const last = entries[entries.length - 1]?.[0] ?? cursor;
    const results = await store.read(runId, { after: cursor, count: BATCH });
    const args: string[] = [cursor, last, retention];
    for (const { streamId, result } of results) {
      // Entries past `last` may have arrived between the two reads: the next round takes them.
      if (compareStreamIds(streamId, last) > 0) continue;
      const value = contribution(result);
      if (value !== undefined) args.push(labelOf(result), value, '');
    }
    // A reader that loses the race (0) simply reads the new cursor and goes on from there.
    await FOLD_SCRIPT.run(redis, [keys.runFidelity(runId), keys.runFidelityEpisodes(runId)], args);
  }
}

function compareStreamIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number);
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number);
  return aMs === bMs ? aSeq - bSeq : aMs - bMs;
}

/** The aggregate as stored (call foldRunFidelity first for an up-to-date figure). */
export async function readRunFidelity(redis: RedisClient, keys: Keyspace, runId: string): Promise<RunFidelity> {
  const hash = await redis.hgetall(keys.runFidelity(runId));
  const num = (field: string): number => Number(hash[field] ?? 0);
  const firstDivergence = Object.fromEntries(
    FIRST_DIVERGENCE_BUCKETS.map((bucket) => [bucket, num(`bucket:${bucket}`)]),
  ) as Record<FirstDivergenceBucket, number>;
  const replayed = num('episodes');
  const clean = firstDivergence.none;
  const stepsCompared = num('steps_compared');
  const stepsMatched = num('steps_matched');
  return {
    replayed,
    clean,
    cleanShare: replayed > 0 ? clean / replayed : null,
    firstDivergence,
    stepsCompared,
    stepsMatched,
    stepRatio: stepsCompared > 0 ? stepsMatched / stepsCompared : null,
  };
}

/** Fold, then read: the run's current figure. */
export async function getRunFidelity(redis: RedisClient, keys: Keyspace, runId: string): Promise<RunFidelity> {
  await foldRunFidelity(redis, keys, runId);
  return readRunFidelity(redis, keys, runId);
}
