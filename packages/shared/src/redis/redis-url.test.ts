import { describe, expect, it } from 'vitest';
import { Cluster, Redis } from 'ioredis';
import { loadConfig } from '../config/load-config.js';
import { RolloutError } from '../errors/rollout-error.js';
import { connectRedis } from './connect-redis.js';
import { createRedis } from './create-redis.js';
import { hashTagOf } from './hash-tag.js';
import { RedisUrlError, describeRedisUrl, parseRedisUrl } from './redis-url.js';

function urlProblem(value: string): string {
  try {
    parseRedisUrl(value);
  } catch (error) {
    if (error instanceof RedisUrlError) return error.message;
    throw error;
  }
  throw new Error(`accepted ${value}`);
}

function configProblem(env: Record<string, string>): string {
  try {
    loadConfig(env, { dotenvPath: false });
  } catch (error) {
    if (error instanceof RolloutError) return error.message;
    throw error;
  }
  throw new Error('configuration accepted');
}

describe('REDIS_URL', () => {
  it('names one server with redis:// and rediss://', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/')).toEqual({ url: 'redis://127.0.0.1:6379', cluster: undefined });
    expect(parseRedisUrl('rediss://u:p@cache.example:6380/2').cluster).toBeUndefined();
  });

  it('names a cluster with redis+cluster:// and its seed nodes, credentials percent-decoded', () => {
    expect(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,node-c').cluster).toEqual({
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'node-c', port: 6379 },
      ],
      tls: false,
      username: undefined,
      password: undefined,
    });
    expect(parseRedisUrl('rediss+cluster://fleet:p%40ss@[::1]:7000/').cluster).toEqual({
      nodes: [{ host: '::1', port: 7000 }],
      tls: true,
      username: 'fleet',
      password: 'p@ss',
    });
    expect(parseRedisUrl('redis+cluster://:secret@h:1').cluster).toMatchObject({
      username: undefined,
      password: 'secret',
    });
  });

  it('refuses what a cluster URL cannot mean, saying what to write instead', () => {
    expect(urlProblem('redis+cluster://h:7000/3')).toMatch(/database index.*remove the \/<db> path/);
    expect(urlProblem('redis+cluster://')).toMatch(/lists no nodes/);
    expect(urlProblem('redis+cluster://h:99999')).toMatch(/port is not 1-65535/);
    expect(urlProblem('redis+cluster://h:7000?tls=1')).toMatch(/query/);
    expect(urlProblem('http://h:6379')).toMatch(/redis\+cluster:\/\//);
  });

  it('never prints a password', () => {
    expect(describeRedisUrl('redis+cluster://fleet:hunter2@a:1,b:2')).toBe('redis+cluster://fleet:***@a:1,b:2');
    expect(describeRedisUrl('redis://:hunter2@a:1')).toBe('redis://:***@a:1');
    expect(describeRedisUrl('redis://a:1')).toBe('redis://a:1');
    const message = configProblem({ REDIS_URL: 'redis+cluster://u:hunter2@a:1/5' });
    expect(message).toContain('REDIS_URL');
    expect(message).not.toContain('hunter2');
  });

  it('gives the factory a Cluster for cluster URLs and a Redis otherwise (BullMQ gets the same client)', () => {
    const single = createRedis('redis://127.0.0.1:1', { lazyConnect: true });
    const cluster = createRedis('redis+cluster://127.0.0.1:1,127.0.0.1:2', { lazyConnect: true });
    expect(single).toBeInstanceOf(Redis);
    expect(cluster).toBeInstanceOf(Cluster);
    expect((cluster as Cluster).options.redisOptions?.maxRetriesPerRequest).toBeUndefined();
    const blocking = createRedis('redis+cluster://127.0.0.1:1', { lazyConnect: true, role: 'blocking' }) as Cluster;
    expect(blocking.options.redisOptions?.maxRetriesPerRequest).toBeNull();
    for (const client of [single, cluster, blocking]) client.disconnect();
  });
});

describe('RF_PREFIX on a cluster', () => {
  it('finds the hash tag the way Redis Cluster does', () => {
    expect(hashTagOf('{rf}')).toBe('rf');
    expect(hashTagOf('team-{rf}-a')).toBe('rf');
    expect(hashTagOf('rf')).toBeUndefined();
    expect(hashTagOf('{}rf')).toBeUndefined();
    expect(hashTagOf('{rf')).toBeUndefined();
  });

  it('refuses a prefix without braces against a cluster, with the fix', () => {
    const message = configProblem({ REDIS_URL: 'redis+cluster://127.0.0.1:7000', RF_PREFIX: 'rf' });
    expect(message).toContain('RF_PREFIX="rf" has no hash tag, but REDIS_URL is a Redis Cluster');
    expect(message).toContain('CROSSSLOT');
    expect(message).toContain('RF_PREFIX={rf}');
    expect(configProblem({ REDIS_URL: 'redis+cluster://127.0.0.1:7000', RF_PREFIX: '{}x' })).toContain('RF_PREFIX={x}');
  });

  it('accepts the default prefix on a cluster and any prefix on one server', () => {
    expect(loadConfig({ REDIS_URL: 'redis+cluster://127.0.0.1:7000' }, { dotenvPath: false }).queue.prefix).toBe(
      '{rf}',
    );
    expect(
      loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', RF_PREFIX: 'rf' }, { dotenvPath: false }).redis.cluster,
    ).toBeUndefined();
  });
});

describe('connectRedis', () => {
  it('fails at once with REDIS_UNAVAILABLE naming the URL (password masked) when nothing answers', async () => {
    const started = Date.now();
    const error = await connectRedis(parseRedisUrl('redis://:hunter2@127.0.0.1:1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RolloutError);
    expect((error as RolloutError).code).toBe('REDIS_UNAVAILABLE');
    expect((error as RolloutError).message).toContain('redis://:***@127.0.0.1:1');
    expect((error as RolloutError).message).not.toContain('hunter2');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('fails at once for a cluster none of whose seeds answer', async () => {
    const error = await connectRedis(parseRedisUrl('redis+cluster://127.0.0.1:1,127.0.0.1:2')).catch((e: unknown) => e);
    expect((error as RolloutError).code).toBe('REDIS_UNAVAILABLE');
    expect((error as RolloutError).message).toContain('redis+cluster://127.0.0.1:1,127.0.0.1:2');
  });
});
