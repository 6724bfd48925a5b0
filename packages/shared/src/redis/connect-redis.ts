/**
 * Connects and proves the connection works, failing at once with one clear error: for commands a person
 * waits on (they must not hang on a missing Redis) and for a worker's start-up check.
 */
import { RolloutError } from '../errors/rollout-error.js';
import { createRedis, isCluster, type CreateRedisOptions, type RedisClient } from './create-redis.js';
import { describeRedisUrl, type RedisConfig } from './redis-url.js';

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * A connected, pinged client (role `fail-fast` unless given). Throws REDIS_UNAVAILABLE when Redis does not
 * answer, and CONFIG_INVALID when REDIS_URL names one server but that server is a cluster node (every
 * command for another node's slots would fail with MOVED).
 */
export async function connectRedis(redis: RedisConfig, options: CreateRedisOptions = {}): Promise<RedisClient> {
  const client = createRedis(redis, { role: 'fail-fast', ...options, lazyConnect: true });
  // Failures are reported through the rejected promises below; without a listener ioredis would print them too.
  // The connection's own error (ECONNREFUSED, ENOTFOUND, WRONGPASS) says more than the command's "Connection is closed.".
  let connectionError: unknown;
  const onError = (err: unknown): void => {
    connectionError ??= err;
  };
  client.on('error', onError);
  let clusterNode = false;
  try {
    await client.connect();
    await client.ping();
    if (!isCluster(client)) clusterNode = /cluster_enabled:1/.test(await client.info('cluster'));
  } catch (cause) {
    client.disconnect();
    throw new RolloutError(
      'REDIS_UNAVAILABLE',
      `cannot reach Redis at ${describeRedisUrl(redis.url)} (${messageOf(connectionError ?? cause)}); start one (redis-server) or set REDIS_URL`,
      { cause },
    );
  }
  if (clusterNode) {
    client.disconnect();
    throw new RolloutError(
      'CONFIG_INVALID',
      `REDIS_URL ${describeRedisUrl(redis.url)} is a node of a Redis Cluster, but names one server; write it as redis+cluster://host:port[,host:port…] (rediss+cluster:// for TLS)`,
    );
  }
  client.off('error', onError);
  return client;
}
