/**
 * vitest globalSetup: one Redis for the whole run, so `npm test` works on a fresh machine. REDIS_URL when set,
 * else 127.0.0.1:6379 when it answers, else a throwaway redis-server on a free port (stopped at the end);
 * test workers inherit REDIS_URL. No Redis at all fails the run at once, saying what to install.
 */
import { findRedis } from '@rollout-fleet/shared';

export default async function setup(): Promise<() => Promise<void>> {
  const found = await findRedis(process.env.REDIS_URL);
  if (found.origin === 'spawned') {
    process.env.REDIS_URL = found.url;
    console.log(`tests: nothing answered on 127.0.0.1:6379; using a throwaway redis-server at ${found.url}`);
  }
  return () => found.close();
}
