/**
 * RL groups in Redis. Wire contract:
 * - `group-sizes:<run>` hash, episode id → samples in the group; counted by register-jobs.lua as job ids are
 *   first registered at submit (never twice for one job id).
 * - `group:<run>|<episode>` hash, `s<sample>` → 1 for each sample with a result, set by commit-result.lua;
 *   `emitted` → the stream id of the group's event once it completed.
 * - `groups:<run>` stream, one entry {episode, size} per completed group, appended by commit-result.lua in
 *   the same script that stores the completing result: once per group, whatever the interleaving of commits.
 * Events are built at read time from the stored results, so rewards are the results' own.
 */
import { LuaScript } from '../redis/lua-script.js';
import type { RedisClient } from '../redis/create-redis.js';
import { rewardStats, type GroupEvent, type GroupSample } from '../contracts/group.js';
import { EpisodeResultSchema, type EpisodeResult } from '../contracts/result.js';
import { followStream, streamField, type StreamPage } from './follow-stream.js';
import type { Keyspace } from './keys.js';
import { parseResultValue } from './result-codec.js';

const REGISTER_SCRIPT = LuaScript.load(new URL('./register-jobs.lua', import.meta.url));
const PAGE = 100;

export interface StreamedGroup {
  /** The cursor: stream id of this group's event. */
  streamId: string;
  group: GroupEvent;
}

export interface GroupCounts {
  /** Groups registered for the run (distinct episode ids). */
  total: number;
  /** Groups whose event was emitted. */
  completed: number;
}

export class GroupStore {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;

  constructor(redis: RedisClient, keys: Keyspace) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /** Adds job ids to the run, counting each new one into its group's size. Returns how many were new. */
  async registerJobs(runId: string, jobs: ReadonlyArray<{ jobId: string; episodeId: string }>): Promise<number> {
    if (jobs.length === 0) return 0;
    const args = jobs.flatMap((job) => [job.jobId, job.episodeId]);
    return (await REGISTER_SCRIPT.run(
      this.#redis,
      [this.#keys.runJobs(runId), this.#keys.groupSizes(runId)],
      args,
    )) as number;
  }

  /**
   * Marks samples as without a result again (their results were deleted to run them again), so a group that has
   * not completed yet waits for their new results. A group whose event was emitted stays emitted.
   */
  async forgetSamples(
    runId: string,
    samples: ReadonlyArray<{ episodeId: string; sampleIndex: number }>,
  ): Promise<void> {
    if (samples.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const s of samples) pipeline.hdel(this.#keys.group(runId, s.episodeId), `s${s.sampleIndex}`);
    await pipeline.exec();
  }

  async counts(runId: string): Promise<GroupCounts> {
    const [total, completed] = await Promise.all([
      this.#redis.hlen(this.#keys.groupSizes(runId)),
      this.#redis.hget(this.#keys.run(runId), 'groups_completed'),
    ]);
    return { total, completed: Number(completed ?? 0) };
  }

  /** Completed groups after `after` (exclusive; '0' = from the start), in completion order. */
  async read(runId: string, options: { after?: string; count?: number } = {}): Promise<StreamedGroup[]> {
    return (await this.page(runId, options.after ?? '0', options.count ?? PAGE)).items;
  }

  /** Completed groups as they complete, after `after`; ends on `signal` or once `until` says so. */
  follow(
    runId: string,
    options: {
      after?: string;
      signal?: AbortSignal;
      blockMs?: number;
      until?: () => Promise<boolean>;
      onCursor?: (cursor: string) => void;
    } = {},
  ): AsyncGenerator<StreamedGroup> {
    return followStream({
      redis: this.#redis,
      key: this.#keys.groups(runId),
      ...options,
      readPage: (after) => this.page(runId, after, PAGE),
    });
  }

  /** One page after `after`; `cursor` is the last entry read (also an expired one), undefined at the end. */
  async page(runId: string, after: string, count: number): Promise<StreamPage<StreamedGroup>> {
    const start = after !== '0' ? `(${after}` : '-';
    const entries = await this.#redis.xrange(this.#keys.groups(runId), start, '+', 'COUNT', count);
    if (entries.length === 0) return { items: [], cursor: undefined };
    const episodes = entries.map(([, fields]) => streamField(fields, 'episode'));
    const members = this.#redis.pipeline();
    for (const episodeId of episodes) members.hkeys(this.#keys.group(runId, episodeId));
    const memberReplies = (await members.exec()) ?? [];
    const samplesOf = episodes.map((_, i) =>
      ((memberReplies[i]?.[1] ?? []) as string[])
        .filter((field) => field.startsWith('s'))
        .map((field) => Number(field.slice(1)))
        .filter((n) => Number.isInteger(n) && n >= 0)
        .sort((a, b) => a - b),
    );
    const resultKeys = episodes.flatMap((episodeId, i) =>
      (samplesOf[i] ?? []).map((sample) => this.#keys.result(runId, episodeId, sample)),
    );
    const raw = resultKeys.length > 0 ? await this.#redis.mgetBuffer(...resultKeys) : [];
    let next = 0;
    const items = entries.map(([streamId, fields], i): StreamedGroup => {
      const results: EpisodeResult[] = [];
      for (const _ of samplesOf[i] ?? []) {
        const value = raw[next++];
        // Expired by retention: the event still says the group completed, with what is left.
        if (value !== null && value !== undefined) results.push(EpisodeResultSchema.parse(parseResultValue(value)));
      }
      return {
        streamId,
        group: groupEvent({
          runId,
          episodeId: episodes[i] as string,
          size: Number(streamField(fields, 'size')),
          streamId,
          results,
        }),
      };
    });
    return { items, cursor: entries.at(-1)?.[0] };
  }
}

function groupEvent(o: {
  runId: string;
  episodeId: string;
  size: number;
  streamId: string;
  results: EpisodeResult[];
}): GroupEvent {
  const samples: GroupSample[] = o.results.map((r) => ({
    sample_index: r.sample_index,
    status: r.status,
    resolved: r.resolved,
    reward: r.reward,
  }));
  const stats = rewardStats(samples.map((s) => s.reward));
  return {
    run_id: o.runId,
    episode_id: o.episodeId,
    instance_id: o.results[0]?.instance_id ?? '',
    size: o.size,
    samples,
    rewarded: stats.rewarded,
    reward_mean: stats.mean,
    reward_std: stats.std,
    completed_at: new Date(Number(o.streamId.split('-')[0])).toISOString(),
    results: o.results,
  };
}
