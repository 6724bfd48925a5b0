/**
 * The Lua script loader: `--- @include "<name>"` resolved from `includes/` beside the script (each include once,
 * before what needs it), a missing include and a cycle refused with the file named, and EVALSHA falling back to
 * EVAL on NOSCRIPT — on real Redis.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../net/free-port.js';
import { createRedis, type RedisClient } from './create-redis.js';
import { findRedis, type FoundRedis } from './local-redis.js';
import { LuaScript, LuaScriptError } from './lua-script.js';

let dir: string;

async function scripts(files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
}

const url = (name: string): URL => pathToFileURL(join(dir, name));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lua-script-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('LuaScript.load', () => {
  it('inlines each include once, before the code that needs it, nested includes too', async () => {
    await scripts({
      'joined.lua': '--- @include "join"\n--- @include "shout"\nreturn shout(join(KEYS[1], ARGV[1]))\n',
      'includes/join.lua': "local function join(a, b) return a .. ':' .. b end\n",
      // `shout` needs `join` as well: it is already inlined above, so it is not repeated.
      'includes/shout.lua': '--- @include "join"\nlocal function shout(s) return join(string.upper(s), "!") end\n',
    });
    const script = LuaScript.load(url('joined.lua'));
    expect(script.source).not.toContain('@include');
    expect(script.source.split('local function join').length - 1).toBe(1);
    expect(script.source.indexOf('local function join')).toBeLessThan(script.source.indexOf('local function shout'));
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      expect(await script.run(redis, [`lua-script-test:${process.pid}`], ['x'])).toBe(
        `LUA-SCRIPT-TEST:${process.pid}:X:!`,
      );
    } finally {
      redis.disconnect();
    }
  });

  it('refuses a missing include, naming the script that asks for it and the file it looked for', async () => {
    await scripts({ 'broken.lua': '--- @include "absent"\nreturn 1\n' });
    const load = (): LuaScript => LuaScript.load(url('broken.lua'));
    expect(load).toThrow(LuaScriptError);
    expect(load).toThrow(
      `${join(dir, 'broken.lua')}: --- @include "absent" names ${join(dir, 'includes', 'absent.lua')}, which cannot be read`,
    );
  });

  it('refuses a cycle of includes, naming the chain', async () => {
    await scripts({
      'circular.lua': '--- @include "ping"\nreturn 1\n',
      'includes/ping.lua': '--- @include "pong"\n',
      'includes/pong.lua': '--- @include "ping"\n',
    });
    expect(() => LuaScript.load(url('circular.lua'))).toThrow(
      `${join(dir, 'includes', 'pong.lua')}: --- @include "ping" makes a cycle (ping -> pong -> ping)`,
    );
  });
});

describe('LuaScript.run', () => {
  // SCRIPT FLUSH empties the whole server's script cache: a private redis-server, not the one other tests share.
  let found: FoundRedis;
  let redis: RedisClient;

  beforeAll(async () => {
    found = await findRedis(undefined, `redis://127.0.0.1:${await freePort()}`);
    redis = createRedis(found.url);
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    redis.disconnect();
    await found.close();
  });

  it('runs by SHA, and sends the source again after SCRIPT FLUSH (NOSCRIPT)', async () => {
    expect(found.origin).toBe('spawned');
    const script = new LuaScript("return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const evals = vi.spyOn(redis, 'eval');
    expect(await script.run(redis, ['counter'], [2])).toBe(2);
    expect(evals).toHaveBeenCalledTimes(1);
    expect(await script.run(redis, ['counter'], [3])).toBe(5);
    expect(evals).toHaveBeenCalledTimes(1);
    await redis.script('FLUSH');
    expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
    expect(await script.run(redis, ['counter'], [4])).toBe(9);
    expect(evals).toHaveBeenCalledTimes(2);
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
  });

  it('passes any other error through without sending the source again', async () => {
    const script = new LuaScript("return redis.error_reply('ERR lua-script-test: refused')");
    await script.run(redis, [], []).catch(() => undefined);
    const evals = vi.spyOn(redis, 'eval');
    await expect(script.run(redis, [], [])).rejects.toThrow('lua-script-test: refused');
    expect(evals).not.toHaveBeenCalled();
  });
});
