/**
 * The one answer to "is there such a run?", for every reader and writer of a run (CLI status / results /
 * cancel / retry, the HTTP API): a misspelled run id must never read as an empty run, nor be created by a
 * cancel or a retry. A run exists once a submit created its hash (`created_at`, `total`).
 */
import { RolloutError, closestNames, type Keyspace, type RedisClient } from '@rollout-fleet/shared';

/** How many near misses an unknown run's message names. */
const SUGGESTIONS = 3;

/** The message for an unknown run: the same words everywhere (CLI and API). */
export function unknownRunMessage(runId: string, suggestions: readonly string[]): string {
  const guess = suggestions.length === 0 ? '' : `; did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`;
  return `no run "${runId}"${guess}`;
}

/** Throws RUN_NOT_FOUND (class input: exit 3, HTTP 404) with the closest existing run ids unless the run exists. */
export async function requireRun(options: { redis: RedisClient; keys: Keyspace; runId: string }): Promise<void> {
  const { redis, keys, runId } = options;
  if ((await redis.exists(keys.run(runId))) === 1) return;
  const suggestions = closestNames(runId, (await redis.smembers(keys.runs())).sort(), SUGGESTIONS);
  throw new RolloutError('RUN_NOT_FOUND', unknownRunMessage(runId, suggestions), {
    details: { runId, didYouMean: suggestions },
  });
}
