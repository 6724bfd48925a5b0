/**
 * Exactly-once result storage: one current result per (run, episode, sample), one stream line per current
 * result, counters that always equal the results. Wire contract (Redis, every key under the run's hash tag):
 * - commit (commit-result.lua): SET of the result key, XADD to the run stream, the result index entry and the
 *   run counters, in one script, only when the episode's generation is the one the execution started in and
 *   no result exists yet for it; otherwise nothing is stored and a `duplicate` (same generation) or `stale`
 *   (the episode was forced or retried since) is counted. The same script marks the sample done in its RL
 *   group and, when that completes the group, appends the group's one event (see group-store.ts).
 * - retract (retract-result.lua): the current result is removed with its stream entry, its counts and its mark
 *   in its RL group, and the generation moves on (force, retry --failed, a job re-run from the dashboard); the next commit replaces
 *   it, so every reader of the stream — one reading from the start included — sees one line per episode. A force
 *   or retry records the re-run's job as pending in the same script (`reruns`); it stays until an execution
 *   begins (begin: MULTI of the generation, the current entry and the pending entry's removal) or a result is
 *   stored, so whoever finds it with no live job enqueues it again (requeue-rerun.ts).
 * - recount (recount-run.lua): the counters rebuilt from the index, atomically with commits and retracts.
 * - read/follow: XRANGE / XREAD BLOCK over the run stream, results fetched by key. Stream ids are the resume
 *   cursor (`results --follow --after <id>`); a line superseded after it was read is skipped on a re-read.
 */
import type { RedisClient } from '../redis/create-redis.js';
import { LuaScript } from '../redis/lua-script.js';
import { EpisodeResultSchema, type EpisodeResult, type EpisodeResultInput } from '../contracts/result.js';
import { followStream, streamField, type StreamPage } from './follow-stream.js';
import { encodeResultValue, parseResultValue } from './result-codec.js';
import { jobIdFor, type Keyspace } from './keys.js';

const DAY_S = 24 * 60 * 60;
const COMMIT_SCRIPT = LuaScript.load(new URL('./commit-result.lua', import.meta.url));
const RETRACT_SCRIPT = LuaScript.load(new URL('./retract-result.lua', import.meta.url));
const RECOUNT_SCRIPT = LuaScript.load(new URL('./recount-run.lua', import.meta.url));

export interface ResultStoreOptions {
  /** How long results, streams and run counters live. @defaultValue 14 days */
  retentionS?: number;
  /** Approximate cap on a run's stream length. @defaultValue 1_000_000 */
  streamMaxLen?: number;
  /**
   * Store large results compressed (result-codec.ts). false writes plain JSON, as before compression existed: for
   * measuring the difference (bench:capacity), not for production. @defaultValue true
   */
  compress?: boolean;
}

/** Which execution a commit comes from: the generation it started in and the job's attemptsMade then. */
export interface CommitFence {
  generation: number;
  attemptsMade: number;
  /**
   * The committer did not see the execution begin (a failed job settled after the fact): refused as `stale`
   * while the episode has a pending re-run, since that execution may predate the force.
   */
  afterTheFact?: boolean;
  /**
   * With `afterTheFact`: the job instance settled (its BullMQ creation timestamp). Refused as `stale` when another
   * job instance has begun an execution of the episode since (ResultStore.begin recorded it): a force took this
   * job out, added the episode's job again, and that re-run began — its pending entry is gone, but this failure
   * ran before the force.
   */
  execution?: string;
}

export interface CommitOutcome {
  stored: boolean;
  /** `stale`: the episode was forced or retried after this execution started; its result was dropped. */
  reason: 'stored' | 'duplicate' | 'stale';
  /** Stream id of the committed entry; undefined when nothing was stored. */
  streamId?: string;
  /** Stream id of the group-completed event when this commit completed its group. */
  groupStreamId?: string;
  key: string;
}

export interface StreamedResult {
  streamId: string;
  result: EpisodeResult;
}

/** What the index says about an episode's current result. */
export interface CurrentResult {
  streamId: string;
  status: EpisodeResult['status'];
  resolved: boolean | null;
  /** The job's attemptsMade during the execution that committed it (a later re-run of the job has more). */
  attemptsMade: number;
}

export interface EpisodeState {
  generation: number;
  current: CurrentResult | null;
}

export type RetractOutcome =
  | { retracted: true; generation: number; previous: EpisodeResult }
  | { retracted: false; generation: number }
  | { conflict: true };

export interface RunCounts {
  done: number;
  completed: number;
  failed: number;
  resolved: number;
}

export interface EpisodeRef {
  runId: string;
  episodeId: string;
  sampleIndex: number;
}

type CommitReply = [number, string, string];
type RetractReply = [number, Buffer, Buffer];

export class ResultStore {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #retentionS: number;
  readonly #streamMaxLen: number;
  readonly #compress: boolean;

  constructor(redis: RedisClient, keys: Keyspace, options: ResultStoreOptions = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#retentionS = Math.max(1, Math.round(options.retentionS ?? 14 * DAY_S));
    this.#streamMaxLen = options.streamMaxLen ?? 1_000_000;
    this.#compress = options.compress ?? true;
  }

  /**
   * Stores `result` unless its generation already has one (`duplicate`) or moved on (`stale`). Without a
   * fence the commit counts as generation 0 with attemptsMade 0 (producer-side results, tests).
   */
  async commit(
    result: EpisodeResultInput,
    fence: CommitFence = { generation: 0, attemptsMade: 0 },
  ): Promise<CommitOutcome> {
    const key = this.#keys.result(result.run_id, result.episode_id, result.sample_index);
    const resolved = result.resolved === null ? '' : result.resolved ? '1' : '0';
    // The group's size as registered at submit (a resubmission with more samples may have grown it).
    const size = Number(await this.#redis.hget(this.#keys.groupSizes(result.run_id), result.episode_id));
    const stored = size >= 1 ? { ...result, group: { id: result.episode_id, size } } : result;
    const k = this.#keys;
    const run = result.run_id;
    // The fence travels as one encoded argument (commit-result.lua's header): a new condition is a new field.
    const encodedFence = JSON.stringify({
      generation: fence.generation,
      attemptsMade: fence.attemptsMade,
      ...(fence.afterTheFact ? { afterTheFact: true } : {}),
      ...(fence.execution !== undefined ? { execution: fence.execution } : {}),
    });
    const reply = (await COMMIT_SCRIPT.run(
      this.#redis,
      [
        key,
        k.results(run),
        k.run(run),
        k.resultIndex(run),
        k.generations(run),
        k.groupSizes(run),
        k.group(run, result.episode_id),
        k.groups(run),
        k.reruns(),
        k.began(run),
      ],
      [
        // Compressed when large (result-codec.ts): whole eval logs and step outputs are most of a result.
        this.#compress ? encodeResultValue(JSON.stringify(stored)) : JSON.stringify(stored),
        String(this.#retentionS),
        String(this.#streamMaxLen),
        result.status,
        resolved,
        jobIdFor(run, result.episode_id, result.sample_index),
        result.episode_id,
        String(result.sample_index),
        encodedFence,
      ],
    )) as CommitReply;
    if (reply[0] !== 1) return { stored: false, reason: reply[2] === 'stale' ? 'stale' : 'duplicate', key };
    return {
      stored: true,
      reason: 'stored',
      streamId: reply[1],
      key,
      ...(reply[2] ? { groupStreamId: reply[2] } : {}),
    };
  }

  /** The episode's generation and current result entry (one round trip). */
  async state(ref: EpisodeRef): Promise<EpisodeState> {
    const label = jobIdFor(ref.runId, ref.episodeId, ref.sampleIndex);
    // One MULTI: a generation and an entry that belong together.
    const [[, generation], [, entry]] = (await this.#redis
      .multi()
      .hget(this.#keys.generations(ref.runId), label)
      .hget(this.#keys.resultIndex(ref.runId), label)
      .exec()) as [[unknown, string | null], [unknown, string | null]];
    return { generation: Number(generation ?? 0), current: parseEntry(entry) };
  }

  /**
   * An execution begins: the episode's generation and current result entry, and — in the same MULTI — its
   * pending re-run (if any) is cleared, since this execution is that re-run: it runs in the generation the force
   * opened, and from here BullMQ's attempts, stalls and the failed-job settlement own the job as for any other.
   * `execution` (the job instance: its BullMQ creation timestamp) is recorded as the one that began last.
   */
  async begin(ref: EpisodeRef, execution?: string): Promise<EpisodeState> {
    const label = jobIdFor(ref.runId, ref.episodeId, ref.sampleIndex);
    const multi = this.#redis
      .multi()
      .hget(this.#keys.generations(ref.runId), label)
      .hget(this.#keys.resultIndex(ref.runId), label)
      .hdel(this.#keys.reruns(), label);
    // Which job instance began (CommitFence.execution): a failure settled after the fact for another one is refused.
    if (execution !== undefined)
      multi.hset(this.#keys.began(ref.runId), label, execution).expire(this.#keys.began(ref.runId), this.#retentionS);
    const [[, generation], [, entry]] = (await multi.exec()) as [
      [unknown, string | null],
      [unknown, string | null],
      ...unknown[],
    ];
    return { generation: Number(generation ?? 0), current: parseEntry(entry) };
  }

  /**
   * Removes the episode's current result (if it is still `expectedStreamId`, when given) and opens the next
   * generation; returns the retracted result so its attempts can be carried into the next one. With `rerun` (the
   * job to enqueue, JSON) the episode is recorded as pending a re-run in the same script.
   */
  async retract(ref: EpisodeRef, options: { expectedStreamId?: string; rerun?: string } = {}): Promise<RetractOutcome> {
    const k = this.#keys;
    const run = ref.runId;
    // As bytes: the retracted value may be compressed.
    const reply = (await RETRACT_SCRIPT.runBuffer(
      this.#redis,
      [
        k.result(run, ref.episodeId, ref.sampleIndex),
        k.results(run),
        k.run(run),
        k.resultIndex(run),
        k.generations(run),
        k.group(run, ref.episodeId),
        k.reruns(),
      ],
      [
        jobIdFor(run, ref.episodeId, ref.sampleIndex),
        options.expectedStreamId ?? '',
        String(this.#retentionS),
        `s${ref.sampleIndex}`,
        options.rerun ?? '',
      ],
    )) as RetractReply;
    if (reply[0] === -1) return { conflict: true };
    const generation = Number(reply[1].toString());
    // A result whose key expired by retention while its index entry lived on: nothing to carry over.
    if (reply[0] === 1 && reply[2].length > 0)
      return { retracted: true, generation, previous: EpisodeResultSchema.parse(parseResultValue(reply[2])) };
    return { retracted: false, generation };
  }

  /** Rebuilds the run counters from the result index, atomically with commits and retracts. */
  async recount(runId: string): Promise<RunCounts> {
    const keys = [this.#keys.run(runId), this.#keys.resultIndex(runId)];
    const [done, completed, failed, resolved] = (await RECOUNT_SCRIPT.run(this.#redis, keys, [])) as [
      number,
      number,
      number,
      number,
    ];
    return { done, completed, failed, resolved };
  }

  async get(runId: string, episodeId: string, sampleIndex: number): Promise<EpisodeResult | undefined> {
    const raw = await this.#redis.getBuffer(this.#keys.result(runId, episodeId, sampleIndex));
    return raw === null ? undefined : EpisodeResultSchema.parse(parseResultValue(raw));
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
    options: {
      after?: string;
      signal?: AbortSignal;
      blockMs?: number;
      until?: () => Promise<boolean>;
      onCursor?: (cursor: string) => void;
    } = {},
  ): AsyncGenerator<StreamedResult> {
    return followStream({
      redis: this.#redis,
      key: this.#keys.results(runId),
      ...options,
      readPage: (after) => this.page(runId, after, 500),
    });
  }

  /** One page after `after`; `cursor` is the last entry read (also an expired one), undefined at the end. */
  async page(runId: string, after: string, count: number): Promise<StreamPage<StreamedResult>> {
    const start = after !== '0' ? `(${after}` : '-';
    const entries = await this.#redis.xrange(this.#keys.results(runId), start, '+', 'COUNT', count);
    return { items: await this.#resolveEntries(runId, entries), cursor: entries.at(-1)?.[0] };
  }

  async #resolveEntries(runId: string, entries: Array<[string, string[]]>): Promise<StreamedResult[]> {
    if (entries.length === 0) return [];
    const keys = entries.map(([, fields]) => streamField(fields, 'key'));
    const labels = entries.map(([, fields]) => streamField(fields, 'job'));
    const [values, current] = await Promise.all([
      this.#redis.mgetBuffer(...keys),
      this.#redis.hmget(this.#keys.resultIndex(runId), ...labels),
    ]);
    const out: StreamedResult[] = [];
    entries.forEach(([streamId], i) => {
      const raw = values[i];
      // Expired by retention while its stream entry lived on: skip rather than fail the reader.
      if (raw === null || raw === undefined) return;
      // Replaced by a later result of the same episode (its line is deleted then; this covers a reader racing it).
      const entry = parseEntry(current[i] ?? null);
      if (entry !== null && entry.streamId !== streamId) return;
      out.push({ streamId, result: EpisodeResultSchema.parse(parseResultValue(raw)) });
    });
    return out;
  }
}

function parseEntry(entry: string | null): CurrentResult | null {
  if (entry === null) return null;
  const [streamId = '', status, resolved, attemptsMade] = entry.split(' ');
  return {
    streamId,
    status: status === 'failed' ? 'failed' : 'completed',
    resolved: resolved === '1' ? true : resolved === '0' ? false : null,
    attemptsMade: Number(attemptsMade ?? 0),
  };
}
