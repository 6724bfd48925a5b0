/**
 * The fleet's CreateSandbox pace: GCRA booking plus AIMD adaptation, one Redis hash per sandbox target, every
 * decision taken by one script per operation (create-rate/{take,drop,peek}.lua) on Redis's clock. A platform 429 lowers the rate for every worker at once
 * (multiplicative decrease); it climbs back linearly while no 429 comes (additive increase).
 */
import { LuaScript, type Keyspace, type RedisClient } from '@rollout-fleet/shared';

const SCRIPTS = {
  take: LuaScript.load(new URL('./create-rate/take.lua', import.meta.url)),
  drop: LuaScript.load(new URL('./create-rate/drop.lua', import.meta.url)),
  peek: LuaScript.load(new URL('./create-rate/peek.lua', import.meta.url)),
};

export interface CreateRateOptions {
  /** Creates per second across the fleet: the starting rate and the ceiling of recovery. */
  ratePerS: number;
  /** Creates that may go at once after a quiet spell. */
  burst: number;
  /** Seconds to climb linearly from the floor back to `ratePerS`. */
  recoverS: number;
  /** Lowest rate a run of 429s may reach. @defaultValue ratePerS / 16 */
  floorPerS?: number;
  /** Multiplicative decrease on a 429. @defaultValue 0.5 */
  decrease?: number;
  /** 429s closer together than this are one signal (one decrease). @defaultValue 1000 ms */
  dropCooldownMs?: number;
  /** How far ahead a caller may book its slot; beyond it, it is told to come back later. @defaultValue 2000 ms */
  horizonMs?: number;
}

export type TakeOutcome =
  /** Booked: call CreateSandbox after `waitMs` (at server time `at`, ms). */
  | { booked: true; waitMs: number; ratePerS: number; at: number }
  /** Nothing booked: the next slot (`at`) is further away than the horizon; try again after `retryMs`. */
  | { booked: false; retryMs: number; ratePerS: number; at: number };

export class CreateRateLimiter {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #o: Required<CreateRateOptions>;

  constructor(redis: RedisClient, keys: Keyspace, options: CreateRateOptions) {
    this.#redis = redis;
    this.#keys = keys;
    this.#o = {
      floorPerS: options.ratePerS / 16,
      decrease: 0.5,
      dropCooldownMs: 1000,
      horizonMs: 2000,
      ...options,
    };
  }

  get options(): Readonly<Required<CreateRateOptions>> {
    return this.#o;
  }

  /** Books the next create slot of `target` (or says when to ask again). `ratePerS` overrides the ceiling. */
  async take(target: string, o: { horizonMs?: number; ratePerS?: number } = {}): Promise<TakeOutcome> {
    const reply = (await this.#call('take', target, o.ratePerS, o.horizonMs ?? this.#o.horizonMs)) as [
      number,
      number,
      string,
      string,
    ];
    const [booked, ms, rate, at] = reply;
    return booked === 1
      ? { booked: true, waitMs: ms, ratePerS: Number(rate), at: Number(at) }
      : { booked: false, retryMs: ms, ratePerS: Number(rate), at: Number(at) };
  }

  /** The platform answered 429: lower the fleet's rate for `target`. Returns the new rate. */
  async drop(target: string, o: { ratePerS?: number } = {}): Promise<number> {
    const [rate] = (await this.#call('drop', target, o.ratePerS, this.#o.decrease, this.#o.dropCooldownMs)) as [string];
    return Number(rate);
  }

  /** The current rate and how far the schedule runs ahead of now (ms). */
  async peek(target: string, o: { ratePerS?: number } = {}): Promise<{ ratePerS: number; aheadMs: number }> {
    const [rate, ahead] = (await this.#call('peek', target, o.ratePerS)) as [string, string];
    return { ratePerS: Number(rate), aheadMs: Number(ahead) };
  }

  #call(op: keyof typeof SCRIPTS, target: string, ceiling: number | undefined, ...rest: number[]): Promise<unknown> {
    const rate = ceiling ?? this.#o.ratePerS;
    const floor = Math.min(rate, ceiling === undefined ? this.#o.floorPerS : ceiling / 16);
    const recovery = (rate - floor) / this.#o.recoverS;
    return SCRIPTS[op].run(
      this.#redis,
      [this.#keys.createRate(target)],
      [rate, this.#o.burst, floor, recovery, ...rest],
    );
  }
}
