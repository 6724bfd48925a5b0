import { type Keyspace, type RedisClient, ResultStore, type StreamedResult } from '@rollout-fleet/shared';

export interface StreamResultsOptions {
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  /** Resume after this stream id (as printed by a previous read); '0' = from the start. */
  after?: string;
  /** Keep waiting for new results until every job of the run is done. @defaultValue false */
  follow?: boolean;
  signal?: AbortSignal;
}

/** Yields a run's results in completion order; with `follow`, also those still to come. */
export async function* streamResults(options: StreamResultsOptions): AsyncGenerator<StreamedResult> {
  const { redis, keys, runId } = options;
  const store = new ResultStore(redis, keys);
  if (!options.follow) {
    let after = options.after ?? '0';
    for (;;) {
      const page = await store.read(runId, { after, count: 500 });
      if (page.length === 0) return;
      for (const item of page) yield item;
      after = (page[page.length - 1] as StreamedResult).streamId;
    }
  }
  const finished = async (): Promise<boolean> => {
    const [done, total, cancelled] = await redis.hmget(keys.run(runId), 'done', 'total', 'cancelled');
    return cancelled === '1' || Number(done ?? 0) >= Number(total ?? 0);
  };
  yield* store.follow(runId, {
    ...(options.after ? { after: options.after } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    until: finished,
  });
}
