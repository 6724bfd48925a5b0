/**
 * Tells running episodes, within about one interval, that they must stop: their run was cancelled
 * (`CANCELLED`), or the episode was forced / retried while it ran, so its generation moved on (`SUPERSEDED`).
 * One timer per worker process; each tick is one pipelined round trip for all running episodes
 * (HGET run `cancelled` per run, HGET generation per episode), so the cost does not grow with the fleet's
 * other workers. Redis is the only source of truth: nothing is broadcast, nothing can be missed by a
 * worker that was briefly disconnected.
 */
import { RolloutError, jobIdFor, type Keyspace, type Logger, type RedisClient } from '@rollout-fleet/shared';

export interface WatchedEpisode {
  runId: string;
  episodeId: string;
  sampleIndex: number;
  /** The generation the execution started in. */
  generation: number;
}

interface Watched extends WatchedEpisode {
  label: string;
  controller: AbortController;
}

export interface EpisodeWatchOptions {
  redis: RedisClient;
  keys: Keyspace;
  logger: Logger;
  /** How often running episodes are checked. @defaultValue 1000 ms */
  intervalMs?: number;
}

export class EpisodeWatch {
  readonly #o: EpisodeWatchOptions;
  readonly #watched = new Set<Watched>();
  #timer: NodeJS.Timeout | undefined;
  #busy = false;

  constructor(options: EpisodeWatchOptions) {
    this.#o = options;
  }

  /** Starts watching one running episode; its signal aborts with CANCELLED or SUPERSEDED. */
  track(episode: WatchedEpisode): { signal: AbortSignal; stop: () => void } {
    const watched: Watched = { ...episode, label: jobIdFor(episode.runId, episode.episodeId, episode.sampleIndex), controller: new AbortController() };
    this.#watched.add(watched);
    this.#timer ??= setInterval(() => void this.check(), this.#o.intervalMs ?? 1000).unref();
    return {
      signal: watched.controller.signal,
      stop: () => {
        this.#watched.delete(watched);
        if (this.#watched.size === 0) this.#stopTimer();
      },
    };
  }

  /** One check of every running episode (the timer calls this; tests may too). */
  async check(): Promise<void> {
    if (this.#busy || this.#watched.size === 0) return;
    this.#busy = true;
    try {
      const { redis, keys } = this.#o;
      const watched = [...this.#watched].filter((w) => !w.controller.signal.aborted);
      const runs = [...new Set(watched.map((w) => w.runId))];
      const pipeline = redis.pipeline();
      for (const runId of runs) pipeline.hget(keys.run(runId), 'cancelled');
      for (const w of watched) pipeline.hget(keys.generations(w.runId), w.label);
      const answers = (await pipeline.exec()) ?? [];
      const cancelled = new Set(runs.filter((_, i) => answers[i]?.[1] === '1'));
      watched.forEach((w, i) => {
        if (cancelled.has(w.runId)) {
          w.controller.abort(new RolloutError('CANCELLED', `run ${w.runId} was cancelled`));
          return;
        }
        const generation = Number(answers[runs.length + i]?.[1] ?? 0);
        if (generation !== w.generation) {
          w.controller.abort(new RolloutError('SUPERSEDED', `episode ${w.label} was forced or retried while it ran (generation ${w.generation} → ${generation})`));
        }
      });
    } catch (err) {
      // A missed tick only delays a cancel; the commit's generation check still drops a superseded result.
      this.#o.logger.warn({ err }, 'episode watch: check failed');
    } finally {
      this.#busy = false;
    }
  }

  close(): void {
    this.#stopTimer();
    this.#watched.clear();
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
