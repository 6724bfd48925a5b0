import { Queue } from 'bullmq';
import {
  connectRedis,
  createKeyspace,
  type Config,
  type EpisodeJobData,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';

// Commands import these from here; the one implementation (single server or cluster) lives in shared.
export { connectRedis, describeRedisUrl } from '@rollout-fleet/shared';

export interface QueueContext {
  redis: RedisClient;
  queue: Queue<EpisodeJobData>;
  keys: Keyspace;
  close(): Promise<void>;
}

export async function openQueue(config: Config): Promise<QueueContext> {
  const redis = await connectRedis(config.redis);
  // Queue.close() leaves a connection it was given open, so keep ours to close it.
  const queueConnection = redis.duplicate();
  const queue = new Queue<EpisodeJobData>(config.queue.name, {
    connection: queueConnection,
    prefix: config.queue.prefix,
  });
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
