import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RolloutError, createKeyspace, type Config, type EpisodeJobData, type Keyspace } from '@rollout-fleet/shared';

export interface QueueContext {
  redis: Redis;
  queue: Queue<EpisodeJobData>;
  keys: Keyspace;
  close(): Promise<void>;
}

/** The URL without its password, for messages. */
export function describeRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable REDIS_URL)';
  }
}

/** Connects and fails fast with one clear message when Redis is not there (producers must not hang). */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (cause) {
    redis.disconnect();
    throw new RolloutError(
      'REDIS_UNAVAILABLE',
      `cannot reach Redis at ${describeRedisUrl(url)} (${cause instanceof Error ? cause.message : String(cause)}); start one (redis-server) or set REDIS_URL`,
      { cause },
    );
  }
  return redis;
}

export async function openQueue(config: Config): Promise<QueueContext> {
  const redis = await connectRedis(config.redis.url);
  // Queue.close() leaves a connection it was given open, so keep ours to close it.
  const queueConnection = redis.duplicate();
  const queue = new Queue<EpisodeJobData>(config.queue.name, { connection: queueConnection, prefix: config.queue.prefix });
  return {
    redis,
    queue,
    keys: createKeyspace(config.queue.prefix),
    close: async () => {
      await queue.close();
      queueConnection.disconnect();
      redis.disconnect();
    },
  };
}
