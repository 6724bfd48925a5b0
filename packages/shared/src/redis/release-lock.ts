/** Releasing a token lock (the reaper's, the re-run requeuer's, the failed-job reconciler's): release-lock.lua. */
import type { RedisClient } from './create-redis.js';
import { LuaScript } from './lua-script.js';

const RELEASE_SCRIPT = LuaScript.load(new URL('./release-lock.lua', import.meta.url));

/** Deletes `key` if it still holds `token`; false when the lock had expired and is someone else's (or nobody's). */
export async function releaseLock(redis: RedisClient, key: string, token: string): Promise<boolean> {
  return (await RELEASE_SCRIPT.run(redis, [key], [token])) === 1;
}
