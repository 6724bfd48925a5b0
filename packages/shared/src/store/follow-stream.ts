/**
 * Follows a Redis stream from a cursor: pages through the backlog, then waits with XREAD BLOCK for what comes
 * next. The cursor is the stream id of the last entry looked at, so a reader that stops (or loses its
 * connection) resumes exactly after what it was given.
 */
import type { RedisClient } from '../redis/create-redis.js';

export interface StreamPage<T> {
  items: T[];
  /** Stream id of the last entry read, including entries that yielded no item (expired); undefined when none. */
  cursor: string | undefined;
}

export interface FollowStreamOptions<T> {
  redis: RedisClient;
  key: string;
  /** Resume after this stream id; '0' = from the start. */
  after?: string;
  signal?: AbortSignal;
  /** How long one XREAD BLOCK waits before the `until` check runs again. @defaultValue 2000 ms */
  blockMs?: number;
  /** Checked whenever the backlog is drained; true ends the stream (after a last read of the tail). */
  until?: () => Promise<boolean>;
  /** One page of entries after `after` (exclusive), turned into items. */
  readPage: (after: string) => Promise<StreamPage<T>>;
  /** Told of the cursor after every page (also pages of expired entries that yield nothing). */
  onCursor?: (cursor: string) => void;
}

export async function* followStream<T>(options: FollowStreamOptions<T>): AsyncGenerator<T> {
  let cursor = options.after ?? '0';
  const advance = (page: StreamPage<T>): void => {
    if (page.cursor === undefined) return;
    cursor = page.cursor;
    options.onCursor?.(cursor);
  };
  // A dedicated connection: XREAD BLOCK would stall every other command on a shared one.
  const reader = options.redis.duplicate();
  const abort = (): void => reader.disconnect();
  options.signal?.addEventListener('abort', abort, { once: true });
  try {
    for (;;) {
      const page = await options.readPage(cursor);
      // Items first: a reader that stops part-way through a page must not be told a cursor beyond it.
      yield* page.items;
      advance(page);
      if (page.cursor !== undefined) continue;
      if (options.signal?.aborted) return;
      if (options.until && (await options.until())) {
        for (
          let tail = await options.readPage(cursor);
          tail.cursor !== undefined;
          tail = await options.readPage(cursor)
        ) {
          yield* tail.items;
          advance(tail);
        }
        return;
      }
      const blocked = await reader
        .xread('COUNT', 1, 'BLOCK', options.blockMs ?? 2000, 'STREAMS', options.key, cursor)
        .catch((err: unknown) => {
          if (options.signal?.aborted) return null;
          throw err;
        });
      if (blocked === null && options.signal?.aborted) return;
    }
  } finally {
    options.signal?.removeEventListener('abort', abort);
    reader.disconnect();
  }
}

/** The value of one field of a stream entry (XRANGE gives fields as a flat name, value, ... list). */
export function streamField(fields: readonly string[], name: string): string {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1] as string;
  return '';
}
