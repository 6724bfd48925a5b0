/**
 * Tells running episodes, within about one interval, that they must stop: their run was cancelled
 * (`CANCELLED`), or the episode was forced / retried while it ran, so its generation moved on (`SUPERSEDED`).
 * One timer per worker process; each tick is one pipelined round trip for all running episodes
 * (HGET run `cancelled` and HMGET of the episodes' generations, per run), so the cost does not grow with the fleet's
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
    const watched: Watched = {
      ...episode,
      label: jobIdFor(episode.runId, episode.episodeId, episode.sampleIndex),
      controller: new AbortController(),
    };
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
      // Per run: its `cancelled` flag and one HMGET of its running episodes' generations (one command for a
      // thousand episodes of a run, not a thousand).
      const byRun = new Map<string, Watched[]>();
      for (const w of this.#watched) {
        if (w.controller.signal.aborted) continue;
        const list = byRun.get(w.runId);
        if (list) list.push(w);
        else byRun.set(w.runId, [w]);
      }
      const pipeline = redis.pipeline();
      for (const [runId, list] of byRun) {
        pipeline.hget(keys.run(runId), 'cancelled');
        pipeline.hmget(keys.generations(runId), ...list.map((w) => w.label));
      }
      const answers = (await pipeline.exec()) ?? [];
      let at = 0;
      for (const [runId, list] of byRun) {
        const cancelled = answers[at]?.[1] === '1';
        const generations = (answers[at + 1]?.[1] ?? []) as Array<string | null>;
        at += 2;
        list.forEach((w, i) => {
          if (cancelled) {
            w.controller.abort(new RolloutError('CANCELLED', `run ${runId} was cancelled`));
            return;
          }
          const generation = Number(generations[i] ?? 0);
          if (generation !== w.generation) {
            w.controller.abort(
              new RolloutError(
                'SUPERSEDED',
                `episode ${w.label} was forced or retried while it ran (generation ${w.generation} → ${generation})`,
              ),
            );
          }
        });
      }
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
