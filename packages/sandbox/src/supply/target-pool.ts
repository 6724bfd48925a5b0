/**
 * The sandbox targets a fleet creates in: one veFaaS function + gateway route each (several for several
 * regions or accounts), picked at random by weight. A target that keeps answering errors or 429s is drained
 * fleet-wide (target-health/failure.lua) in favour of the others and tried again once the drain expires. When every
 * target is drained, all of them are used by weight: waiting would help nobody, and the create-rate limiter
 * already slows down.
 */
import { LuaScript, type Keyspace, type RedisClient } from '@rollout-fleet/shared';
import type { VefaasTarget } from '../agent-env/agent-env.js';

const HEALTH = {
  failure: LuaScript.load(new URL('./target-health/failure.lua', import.meta.url)),
  success: LuaScript.load(new URL('./target-health/success.lua', import.meta.url)),
};
const SECOND = 1000;

export interface SupplyTarget {
  /** Stable name (used in Redis keys and lease records): letters, digits, `._-`. */
  id: string;
  target: VefaasTarget;
  /** Share of creates, relative to the other targets. @defaultValue 1 */
  weight?: number;
  /** This target's own create-rate ceiling (creates/s); default: the fleet's. */
  createRatePerS?: number;
}

export interface TargetHealthOptions {
  /** Failures within `windowMs` that drain a target. @defaultValue 5 */
  threshold?: number;
  /** @defaultValue 60 s */
  windowMs?: number;
  /** The first drain; each drain in a row doubles it. @defaultValue 30 s */
  firstDrainMs?: number;
  /** @defaultValue 10 min */
  maxDrainMs?: number;
  /** How long a read of the drained flags is reused. @defaultValue 1 s */
  cacheMs?: number;
}

const TARGET_ID = /^[A-Za-z0-9._-]+$/;

export class TargetPool {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #targets: readonly SupplyTarget[];
  readonly #o: Required<TargetHealthOptions>;
  #drained: { at: number; ids: Set<string> } = { at: -Infinity, ids: new Set() };
  #reading: Promise<Set<string>> | undefined;

  constructor(redis: RedisClient, keys: Keyspace, targets: readonly SupplyTarget[], options: TargetHealthOptions = {}) {
    if (targets.length === 0) throw new Error('a sandbox supply needs at least one target');
    const ids = new Set<string>();
    for (const t of targets) {
      if (!TARGET_ID.test(t.id))
        throw new Error(`sandbox target id ${JSON.stringify(t.id)}: use letters, digits and . _ - only`);
      if (ids.has(t.id)) throw new Error(`sandbox target id ${t.id} is given twice`);
      if ((t.weight ?? 1) <= 0) throw new Error(`sandbox target ${t.id}: weight must be > 0`);
      ids.add(t.id);
    }
    this.#redis = redis;
    this.#keys = keys;
    this.#targets = targets;
    this.#o = {
      threshold: 5,
      windowMs: 60 * SECOND,
      firstDrainMs: 30 * SECOND,
      maxDrainMs: 600 * SECOND,
      cacheMs: SECOND,
      ...options,
    };
  }

  get all(): readonly SupplyTarget[] {
    return this.#targets;
  }

  byId(id: string): SupplyTarget | undefined {
    return this.#targets.find((t) => t.id === id);
  }

  /** A target by weight among those not drained (among all when every one is drained). */
  async pick(random: () => number = Math.random): Promise<SupplyTarget> {
    if (this.#targets.length === 1) return this.#targets[0] as SupplyTarget;
    const drained = await this.drained();
    const healthy = this.#targets.filter((t) => !drained.has(t.id));
    return weighted(healthy.length > 0 ? healthy : this.#targets, random);
  }

  /** Ids of the targets drained right now (cached for `cacheMs`). */
  async drained(): Promise<Set<string>> {
    if (performance.now() - this.#drained.at < this.#o.cacheMs) return this.#drained.ids;
    this.#reading ??= (async () => {
      try {
        const flags = await Promise.all(
          this.#targets.map((t) => this.#redis.exists(this.#keys.targetHealth(t.id).drained)),
        );
        const ids = new Set(this.#targets.filter((_, i) => flags[i] === 1).map((t) => t.id));
        this.#drained = { at: performance.now(), ids };
        return ids;
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }

  /** A create on `id` failed (error or 429). Returns the drain just started (ms), or 0. */
  async failure(id: string): Promise<number> {
    if (this.#targets.length === 1) return 0;
    const k = this.#keys.targetHealth(id);
    const drained = Number(
      await HEALTH.failure.run(
        this.#redis,
        [k.failures, k.drained, k.drains],
        [this.#o.threshold, this.#o.windowMs, this.#o.firstDrainMs, this.#o.maxDrainMs],
      ),
    );
    if (drained > 0) this.#drained = { at: -Infinity, ids: new Set() };
    return drained;
  }

  async success(id: string): Promise<void> {
    if (this.#targets.length === 1) return;
    const k = this.#keys.targetHealth(id);
    await HEALTH.success.run(this.#redis, [k.failures], []);
  }
}

function weighted(targets: readonly SupplyTarget[], random: () => number): SupplyTarget {
  const total = targets.reduce((sum, t) => sum + (t.weight ?? 1), 0);
  let x = random() * total;
  for (const t of targets) {
    x -= t.weight ?? 1;
    if (x < 0) return t;
  }
  return targets[targets.length - 1] as SupplyTarget;
}
