/**
 * Per-step job progress and job-log lines, written in batches: the step loop never waits for Redis. The first
 * step of a quiet spell is written at once (Bull Board shows an episode start moving right away); steps that
 * follow within `intervalMs` are written together when it passes — the latest progress once, and every log
 * row in one command.
 * `close()` writes what is left, so the final progress is stored before the job completes. A failed write is
 * logged and dropped: progress is for people watching, never a reason to fail an episode.
 */
import type { Logger } from '@rollout-fleet/shared';

export interface ProgressSink<P> {
  updateProgress(progress: P): Promise<void>;
  /** Appends the rows to the job's log, in order, in one write. */
  logRows(rows: readonly string[]): Promise<unknown>;
}

export class ProgressBatcher<P> {
  readonly #sink: ProgressSink<P>;
  readonly #intervalMs: number;
  readonly #logger: Logger | undefined;
  #progress: P | undefined;
  #rows: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #lastWrite = -Infinity;
  #writing: Promise<void> = Promise.resolve();

  constructor(sink: ProgressSink<P>, options: { intervalMs?: number; logger?: Logger } = {}) {
    this.#sink = sink;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#logger = options.logger;
  }

  /** Records one step; returns at once. */
  push(progress: P, row: string): void {
    this.#progress = progress;
    this.log(row);
  }

  /** Records a job-log row that moves no progress (the grade); returns at once. */
  log(row: string): void {
    this.#rows.push(row);
    if (this.#timer) return;
    const wait = this.#lastWrite + this.#intervalMs - performance.now();
    if (wait <= 0) {
      this.#flushNow();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#flushNow();
    }, wait);
    this.#timer.unref();
  }

  /** Writes everything pending and waits for it (and any write in flight). */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushNow();
    await this.#writing;
  }

  #flushNow(): void {
    const progress = this.#progress;
    const rows = this.#rows;
    if (progress === undefined && rows.length === 0) return;
    this.#progress = undefined;
    this.#rows = [];
    this.#lastWrite = performance.now();
    // Chained: batches land in order, and close() waits for all of them.
    this.#writing = this.#writing.then(async () => {
      try {
        await Promise.all([
          ...(progress === undefined ? [] : [this.#sink.updateProgress(progress)]),
          ...(rows.length > 0 ? [this.#sink.logRows(rows)] : []),
        ]);
      } catch (err) {
        this.#logger?.warn({ err }, 'could not write job progress');
      }
    });
  }
}
