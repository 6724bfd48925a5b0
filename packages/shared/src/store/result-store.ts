/**
 * Exactly-once result storage. Wire contract (Redis):
 * - commit: one Lua script (commit-result.lua) does SET NX on the result key, XADD to the run stream and
 *   bumps the run counters atomically; a second commit for the same (run, episode, sample) stores nothing
 *   and only counts a duplicate.
 * - read/follow: XRANGE / XREAD BLOCK over the run stream, results fetched by key. Stream ids are the
 *   resume cursor (`results --follow --after <id>`).
 */
import { readFileSync } from 'node:fs';
import type { RedisClient } from '../redis/create-redis.js';
import { EpisodeResultSchema, type EpisodeResult, type EpisodeResultInput } from '../contracts/result.js';
import type { Keyspace } from './keys.js';

const DAY_S = 24 * 60 * 60;
const COMMIT_SCRIPT = readFileSync(new URL('./commit-result.lua', import.meta.url), 'utf8');

export interface ResultStoreOptions {
  /** How long results, streams and run counters live. @defaultValue 14 days */
  retentionS?: number;
  /** Approximate cap on a run's stream length. @defaultValue 1_000_000 */
  streamMaxLen?: number;
}

export interface CommitOutcome {
  stored: boolean;
  /** Stream id of the committed entry; undefined for a duplicate. */
  streamId?: string;
  key: string;
}

export interface StreamedResult {
  streamId: string;
  result: EpisodeResult;
}

type CommitReply = [number, string];

export class ResultStore {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #retentionS: number;
  readonly #streamMaxLen: number;

  constructor(redis: RedisClient, keys: Keyspace, options: ResultStoreOptions = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#retentionS = options.retentionS ?? 14 * DAY_S;
    this.#streamMaxLen = options.streamMaxLen ?? 1_000_000;
  }

  async commit(result: EpisodeResultInput): Promise<CommitOutcome> {
    const key = this.#keys.result(result.run_id, result.episode_id, result.sample_index);
    const resolved = result.resolved === null ? '' : result.resolved ? '1' : '0';
    const reply = (await this.#redis.eval(
      COMMIT_SCRIPT,
      3,
      key,
      this.#keys.results(result.run_id),
      this.#keys.run(result.run_id),
      JSON.stringify(result),
      String(Math.max(1, Math.round(this.#retentionS))),
      String(this.#streamMaxLen),
      result.status,
      resolved,
      `${result.run_id}|${result.episode_id}|${result.sample_index}`,
    )) as CommitReply;
    return reply[0] === 1 ? { stored: true, streamId: reply[1], key } : { stored: false, key };
  }

  async get(runId: string, episodeId: string, sampleIndex: number): Promise<EpisodeResult | undefined> {
    const raw = await this.#redis.get(this.#keys.result(runId, episodeId, sampleIndex));
    return raw === null ? undefined : EpisodeResultSchema.parse(JSON.parse(raw));
  }

  /** Results committed after `after` (exclusive; '0' = from the start), in completion order. */
  async read(runId: string, options: { after?: string; count?: number } = {}): Promise<StreamedResult[]> {
    const start = options.after && options.after !== '0' ? `(${options.after}` : '-';
    const entries = await this.#redis.xrange(this.#keys.results(runId), start, '+', 'COUNT', options.count ?? 500);
    return this.#resolveEntries(entries);
  }

  /**
   * Streams results as they complete, starting after `after`. Ends when `signal` aborts or, when
   * `until` is given, once it returns true (e.g. "every job of the run is done").
   */
  async *follow(
    runId: string,
    options: { after?: string; signal?: AbortSignal; blockMs?: number; until?: () => Promise<boolean> } = {},
  ): AsyncGenerator<StreamedResult> {
    let cursor = options.after ?? '0';
    // A dedicated connection: XREAD BLOCK would stall every other command on a shared one.
    const reader = this.#redis.duplicate();
    const abort = (): void => reader.disconnect();
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      for (;;) {
        const backlog = await this.read(runId, { after: cursor });
        for (const item of backlog) {
          cursor = item.streamId;
          yield item;
        }
        if (backlog.length > 0) continue;
        if (options.signal?.aborted) return;
        if (options.until && (await options.until())) {
          const tail = await this.read(runId, { after: cursor });
          for (const item of tail) yield item;
          return;
        }
        const blocked = await reader
          .xread('COUNT', 1, 'BLOCK', options.blockMs ?? 2000, 'STREAMS', this.#keys.results(runId), cursor)
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

  async #resolveEntries(entries: Array<[string, string[]]>): Promise<StreamedResult[]> {
    if (entries.length === 0) return [];
    const keys = entries.map(([, fields]) => fieldOf(fields, 'key'));
    const values = await this.#redis.mget(...keys);
    const out: StreamedResult[] = [];
    entries.forEach(([streamId], i) => {
      const raw = values[i];
      // Expired by retention while its stream entry lived on: skip rather than fail the reader.
      if (raw === null || raw === undefined) return;
      out.push({ streamId, result: EpisodeResultSchema.parse(JSON.parse(raw)) });
    });
    return out;
  }
}

function fieldOf(fields: string[], name: string): string {
  const at = fields.indexOf(name);
  return at >= 0 ? (fields[at + 1] ?? '') : '';
}
