import {
  GroupStore,
  ResultStore,
  type Keyspace,
  type RedisClient,
  type StreamPage,
  type StreamedGroup,
  type StreamedResult,
} from '@rollout-fleet/shared';

export interface StreamResultsOptions {
  redis: RedisClient;
  keys: Keyspace;
  runId: string;
  /** Resume after this stream id (as printed by a previous read); '0' = from the start. */
  after?: string;
  /** Keep waiting for new results until every job of the run is done. @defaultValue false */
  follow?: boolean;
  signal?: AbortSignal;
  /** How long one blocking read waits before checking whether the run is done. @defaultValue 2000 ms */
  blockMs?: number;
  /** Told of the cursor after every page read, also when the page held only expired entries. */
  onCursor?: (cursor: string) => void;
}

/** Yields a run's results in completion order; with `follow`, also those still to come. */
export function streamResults(options: StreamResultsOptions): AsyncGenerator<StreamedResult> {
  return streamOf(new ResultStore(options.redis, options.keys), options);
}

/**
 * Yields a run's completed RL groups (all samples of one episode id), each once, in completion order; with
 * `follow`, also those still to come, until the run is done (then every group that can complete has).
 */
export function streamGroups(options: StreamResultsOptions): AsyncGenerator<StreamedGroup> {
  return streamOf(new GroupStore(options.redis, options.keys), options);
}

/**
 * A run is over when every registered job has a result. Every job ends with exactly one — a cancelled run's
 * queued and running ones too (CANCELLED), a stalled one too (JOB_STALLED) — so this always comes true; except
 * for jobs an interrupted submit registered but never enqueued: they wait for the submit to be run again,
 * unless the run is cancelled (then nothing will enqueue them).
 */
export async function runFinished(redis: RedisClient, keys: Keyspace, runId: string): Promise<boolean> {
  const [done, total, cancelled, notEnqueued] = await redis.hmget(
    keys.run(runId),
    'done',
    'total',
    'cancelled',
    'not_enqueued',
  );
  const never = cancelled === '1' ? Math.max(0, Number(notEnqueued ?? 0)) : 0;
  return Number(done ?? 0) >= Number(total ?? 0) - never;
}

interface Followable<T> {
  page(runId: string, after: string, count: number): Promise<StreamPage<T>>;
  follow(runId: string, options: Parameters<ResultStore['follow']>[1]): AsyncGenerator<T>;
}

async function* streamOf<T>(store: Followable<T>, options: StreamResultsOptions): AsyncGenerator<T> {
  const { redis, keys, runId } = options;
  if (!options.follow) {
    for (
      let page = await store.page(runId, options.after ?? '0', 500);
      page.cursor !== undefined;
      page = await store.page(runId, page.cursor, 500)
    ) {
      yield* page.items;
      options.onCursor?.(page.cursor);
    }
    return;
  }
  yield* store.follow(runId, {
    ...(options.after ? { after: options.after } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.blockMs ? { blockMs: options.blockMs } : {}),
    ...(options.onCursor ? { onCursor: options.onCursor } : {}),
    until: () => runFinished(redis, keys, runId),
  });
}
