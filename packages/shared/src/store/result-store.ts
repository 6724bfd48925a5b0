/**
 * Exactly-once result storage. Wire contract (Redis):
 * - commit: one Lua script (commit-result.lua) does SET NX on the result key, XADD to the run stream and
 *   bumps the run counters atomically; a second commit for the same (run, episode, sample) stores nothing
 *   and only counts a duplicate. The same script marks the sample done in its RL group and, when that
 *   completes the group, appends the group's one event to the run's groups stream (see group-store.ts).
 *   The stored result records its group (`group: {id, size}`) when the job was registered at submit.
 * - read/follow: XRANGE / XREAD BLOCK over the run stream, results fetched by key. Stream ids are the
 *   resume cursor (`results --follow --after <id>`).
 */
import { readFileSync } from 'node:fs';
import type { RedisClient } from '../redis/create-redis.js';
import { EpisodeResultSchema, type EpisodeResult, type EpisodeResultInput } from '../contracts/result.js';
import { followStream, streamField, type StreamPage } from './follow-stream.js';
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
  /** Stream id of the group-completed event when this commit completed its group. */
  groupStreamId?: string;
  key: string;
}

export interface StreamedResult {
  streamId: string;
  result: EpisodeResult;
}

type CommitReply = [number, string, string];

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
    // The group's size as registered at submit (a resubmission with more samples may have grown it).
    const size = Number(await this.#redis.hget(this.#keys.groupSizes(result.run_id), result.episode_id));
    const stored = size >= 1 ? { ...result, group: { id: result.episode_id, size } } : result;
    const reply = (await this.#redis.eval(
      COMMIT_SCRIPT,
      6,
      key,
      this.#keys.results(result.run_id),
      this.#keys.run(result.run_id),
      this.#keys.groupSizes(result.run_id),
      this.#keys.group(result.run_id, result.episode_id),
      this.#keys.groups(result.run_id),
      JSON.stringify(stored),
      String(Math.max(1, Math.round(this.#retentionS))),
      String(this.#streamMaxLen),
      result.status,
      resolved,
      `${result.run_id}|${result.episode_id}|${result.sample_index}`,
      result.episode_id,
      String(result.sample_index),
    )) as CommitReply;
    if (reply[0] !== 1) return { stored: false, key };
    return { stored: true, streamId: reply[1], key, ...(reply[2] ? { groupStreamId: reply[2] } : {}) };
  }

  async get(runId: string, episodeId: string, sampleIndex: number): Promise<EpisodeResult | undefined> {
    const raw = await this.#redis.get(this.#keys.result(runId, episodeId, sampleIndex));
    return raw === null ? undefined : EpisodeResultSchema.parse(JSON.parse(raw));
  }

  /** Results committed after `after` (exclusive; '0' = from the start), in completion order. */
  async read(runId: string, options: { after?: string; count?: number } = {}): Promise<StreamedResult[]> {
    return (await this.page(runId, options.after ?? '0', options.count ?? 500)).items;
  }

  /**
   * Streams results as they complete, starting after `after`. Ends when `signal` aborts or, when
   * `until` is given, once it returns true (e.g. "every job of the run is done").
   */
  follow(
    runId: string,
    options: { after?: string; signal?: AbortSignal; blockMs?: number; until?: () => Promise<boolean>; onCursor?: (cursor: string) => void } = {},
  ): AsyncGenerator<StreamedResult> {
    return followStream({ redis: this.#redis, key: this.#keys.results(runId), ...options, readPage: (after) => this.page(runId, after, 500) });
  }

  /** One page after `after`; `cursor` is the last entry read (also an expired one), undefined at the end. */
  async page(runId: string, after: string, count: number): Promise<StreamPage<StreamedResult>> {
    const start = after !== '0' ? `(${after}` : '-';
    const entries = await this.#redis.xrange(this.#keys.results(runId), start, '+', 'COUNT', count);
    return { items: await this.#resolveEntries(entries), cursor: entries.at(-1)?.[0] };
  }

  async #resolveEntries(entries: Array<[string, string[]]>): Promise<StreamedResult[]> {
    if (entries.length === 0) return [];
    const keys = entries.map(([, fields]) => streamField(fields, 'key'));
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
