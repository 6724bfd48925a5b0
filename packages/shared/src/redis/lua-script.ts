/**
 * One Lua script run by SHA (EVALSHA), falling back to EVAL once when the server does not know it yet (a fresh
 * or restarted Redis, or another node of a Cluster). Every script of the supply keeps all its keys under one
 * hash tag, so it runs unchanged on Redis Cluster.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RedisClient } from './create-redis.js';

export type ScriptArg = string | number;

export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Reads a script that sits next to the module that uses it. */
  static load(url: URL): LuaScript {
    return new LuaScript(readFileSync(url, 'utf8'));
  }

  async run(redis: RedisClient, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
