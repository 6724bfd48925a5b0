/**
 * When to start a backup attempt of an episode (MapReduce's backup tasks, Spark's speculation): only in a
 * run's tail — once at most `tailFraction` of its episodes are left — for an attempt running longer than
 * `factor` × the run's p90 episode time (p90 over the last 512 completed attempts, once there are
 * `minSamples`), and at most `budgetFraction` of the run's episodes get one (at least one). Defaults are
 * conservative: 10 % tail, 3 × p90, 5 % budget. The run's durations live in Redis (every worker's
 * completions count); reads are cached per run for `cacheMs`.
 */
import type { Keyspace, RedisClient } from '@rollout-fleet/shared';

const DURATIONS_KEPT = 512;

export interface StragglerOptions {
  /** @defaultValue 0.1 */
  tailFraction?: number;
  /** @defaultValue 3 */
  factor?: number;
  /** @defaultValue 10 */
  minSamples?: number;
  /** @defaultValue 0.05 */
  budgetFraction?: number;
  /** How often a running attempt is checked. @defaultValue 1000 ms */
  checkMs?: number;
  /** @defaultValue 1000 ms */
  cacheMs?: number;
}

interface RunView {
  at: number;
  total: number;
  done: number;
  p90Ms: number | null;
}

export class StragglerPolicy {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #o: Required<StragglerOptions>;
  readonly #views = new Map<string, RunView>();

  constructor(redis: RedisClient, keys: Keyspace, options: StragglerOptions = {}) {
    this.#redis = redis;
    this.#keys = keys;
    this.#o = {
      tailFraction: 0.1,
      factor: 3,
      minSamples: 10,
      budgetFraction: 0.05,
      checkMs: 1000,
      cacheMs: 1000,
      ...options,
    };
  }

  get checkMs(): number {
    return this.#o.checkMs;
  }

  /** Records a completed attempt's wall time (ms) for the run's p90. */
  async record(runId: string, ms: number): Promise<void> {
    const key = this.#keys.runDurations(runId);
    await this.#redis
      .multi()
      .lpush(key, Math.round(ms))
      .ltrim(key, 0, DURATIONS_KEPT - 1)
      .expire(key, 14 * 24 * 3600)
      .exec();
  }

  /** Whether an attempt of this run, running for `elapsedMs`, is a straggler worth a backup now. */
  async isStraggler(runId: string, elapsedMs: number): Promise<boolean> {
    const view = await this.#view(runId);
    if (view.p90Ms === null || view.total === 0) return false;
    const left = view.total - view.done;
    if (left <= 0 || left > Math.max(1, Math.ceil(this.#o.tailFraction * view.total))) return false;
    return elapsedMs > this.#o.factor * view.p90Ms;
  }

  /** Takes one unit of the run's backup budget; false when it is spent. */
  async takeBudget(runId: string): Promise<boolean> {
    const view = await this.#view(runId);
    const budget = Math.max(1, Math.ceil(this.#o.budgetFraction * view.total));
    const used = await this.#redis.hincrby(this.#keys.run(runId), 'backups', 1);
    if (used <= budget) return true;
    await this.#redis.hincrby(this.#keys.run(runId), 'backups', -1);
    return false;
  }

  async #view(runId: string): Promise<RunView> {
    const cached = this.#views.get(runId);
    if (cached && performance.now() - cached.at < this.#o.cacheMs) return cached;
    const [counts, durations] = await Promise.all([
      this.#redis.hmget(this.#keys.run(runId), 'total', 'done'),
      this.#redis.lrange(this.#keys.runDurations(runId), 0, -1),
    ]);
    const sorted = durations.map(Number).sort((a, b) => a - b);
    const p90Ms =
      sorted.length >= this.#o.minSamples
        ? (sorted[Math.min(sorted.length - 1, Math.floor(0.9 * sorted.length))] ?? null)
        : null;
    const view = { at: performance.now(), total: Number(counts[0] ?? 0), done: Number(counts[1] ?? 0), p90Ms };
    this.#views.set(runId, view);
    if (this.#views.size > 1000) this.#views.delete(this.#views.keys().next().value as string);
    return view;
  }
}
