/** Test helpers for the dashboard's tests (packages/api/src/dashboard): a config with a unique prefix, a log sink and Redis cleanup. */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  createLogger,
  deleteKeysMatching,
  loadConfig,
  type Config,
  type Logger,
  type RedisClient,
} from '@rollout-fleet/shared';

export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A config for one test: unique prefix, no .env file, the given RF_* variables on top. */
export function dashboardTestConfig(env: Record<string, string> = {}): Config {
  return loadConfig(
    { REDIS_URL: TEST_REDIS_URL, RF_PREFIX: `{rf-dash-${randomUUID()}}`, LOG_LEVEL: 'trace', ...env },
    { dotenvPath: false },
  );
}

/**
 * A trace-level JSON logger keeping every line. It is deliberately given no `secrets`, so a test that
 * looks for credentials in `text()` checks what the dashboard writes, not what the scrubber removes.
 */
export function capturingLogger(): { logger: Logger; text: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return { logger: createLogger({ level: 'trace', format: 'json', destination }), text: () => chunks.join('') };
}

/** Deletes every key of a test prefix: BullMQ's `<prefix>:<queue>:*` and ours `rf:<prefix>:*`. */
export async function deletePrefix(redis: RedisClient, prefix: string): Promise<void> {
  for (const pattern of [`${prefix}:*`, `rf:${prefix}:*`]) await deleteKeysMatching(redis, pattern);
}
