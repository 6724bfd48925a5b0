/**
 * Fleet-wide cap on chat-completion requests in flight per policy endpoint (RF_POLICY_MAX_INFLIGHT), so thousands
 * of sandboxes never overload one inference server. Wire contract (Redis): one sorted set per endpoint
 * (`policyInflight(<endpoint id>)`, under the keyspace's hash tag) of holder tokens scored by expiry on the Redis
 * clock; taking a slot is one Lua script (inflight-acquire.lua), a held slot is renewed by a heartbeat
 * (inflight-renew.lua), releasing is ZREM. A worker that dies holding slots stops renewing them: they expire and
 * come back. Waiting for a slot is not an error: it polls with jittered back-off (bounded by the earliest expiry),
 * and a slot released in this process wakes a local waiter at once.
 */
import { createHash, randomUUID } from 'node:crypto';
import { LuaScript, type Keyspace, type Logger, type RedisClient } from '@rollout-fleet/shared';

const ACQUIRE_SCRIPT = LuaScript.load(new URL('./inflight-acquire.lua', import.meta.url));
const RENEW_SCRIPT = LuaScript.load(new URL('./inflight-renew.lua', import.meta.url));
const SECOND = 1000;

export interface InflightLimiterOptions {
  /** Slots per endpoint, fleet-wide. */
  limit: number;
  /** A slot not renewed for this long is free again (a dead worker's). @defaultValue 30 s */
  slotTtlMs?: number;
  /** First wait between tries; doubles up to maxPollMs, with full jitter. @defaultValue 20 ms */
  minPollMs?: number;
  /** @defaultValue 500 ms */
  maxPollMs?: number;
  logger?: Logger;
}

export interface InflightSlot {
  /** How long the caller waited for it, ms. */
  readonly waitedMs: number;
  /** Gives the slot back; idempotent. */
  release(): Promise<void>;
}

/** One endpoint, however its URL is spelled: scheme + host + port + path, without a trailing slash. */
export function endpointIdOf(baseUrl: string): string {
  const url = new URL(baseUrl);
  const canonical = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`.toLowerCase();
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

type AcquireReply = [number, number, number?];

export class InflightLimiter {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #limit: number;
  readonly #ttlMs: number;
  readonly #minPollMs: number;
  readonly #maxPollMs: number;
  readonly #logger: Logger | undefined;
  /** Local waiters per endpoint key: a release in this process wakes one at once. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Releases seen per endpoint key in this process: a waiter that missed one (it was mid-try) tries again at once. */
  readonly #releases = new Map<string, number>();

  constructor(redis: RedisClient, keys: Keyspace, options: InflightLimiterOptions) {
    this.#redis = redis;
    this.#keys = keys;
    this.#limit = options.limit;
    this.#ttlMs = options.slotTtlMs ?? 30 * SECOND;
    this.#minPollMs = options.minPollMs ?? 20;
    this.#maxPollMs = options.maxPollMs ?? 500;
    this.#logger = options.logger;
  }

  /** Waits for a slot of the endpoint; rejects only when `signal` aborts (with its reason). */
  async acquire(baseUrl: string, signal?: AbortSignal): Promise<InflightSlot> {
    const key = this.#keys.policyInflight(endpointIdOf(baseUrl));
    const token = randomUUID();
    const started = performance.now();
    for (let attempt = 0; ; attempt += 1) {
      signal?.throwIfAborted();
      const releasesBefore = this.#releases.get(key) ?? 0;
      const [taken, , waitMs] = (await ACQUIRE_SCRIPT.run(
        this.#redis,
        [key],
        [token, String(this.#limit), String(this.#ttlMs)],
      )) as AcquireReply;
      if (taken === 1) return this.#held(key, token, performance.now() - started);
      if ((this.#releases.get(key) ?? 0) !== releasesBefore) continue;
      const window = Math.min(this.#maxPollMs, this.#minPollMs * 2 ** Math.min(attempt, 10));
      await this.#wait(key, Math.min(Math.floor(Math.random() * window) + 1, Math.max(1, waitMs ?? window)), signal);
    }
  }

  /** Runs `fn` holding a slot of the endpoint. */
  async withSlot<T>(baseUrl: string, fn: (slot: InflightSlot) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const slot = await this.acquire(baseUrl, signal);
    try {
      return await fn(slot);
    } finally {
      await slot.release();
    }
  }

  #held(key: string, token: string, waitedMs: number): InflightSlot {
    const heartbeat = setInterval(
      () => {
        RENEW_SCRIPT.run(this.#redis, [key], [token, String(this.#ttlMs)])
          .then((held) => {
            if (held === 0)
              this.#logger?.warn(
                { key },
                'policy inflight slot had expired while its request ran (event loop stalled?); taken back',
              );
          })
          .catch((err: unknown) => this.#logger?.warn({ err, key }, 'could not renew a policy inflight slot'));
      },
      Math.max(10, Math.floor(this.#ttlMs / 3)),
    );
    heartbeat.unref();
    let released: Promise<void> | undefined;
    return {
      waitedMs,
      release: () => {
        released ??= (async () => {
          clearInterval(heartbeat);
          try {
            await this.#redis.zrem(key, token);
          } catch (err) {
            // The slot expires by itself within the ttl.
            this.#logger?.warn({ err, key }, 'could not release a policy inflight slot; it expires by itself');
          }
          this.#releases.set(key, (this.#releases.get(key) ?? 0) + 1);
          const next = this.#waiters.get(key)?.values().next();
          if (next !== undefined && next.done !== true) next.value();
        })();
        return released;
      },
    };
  }

  #wait(key: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let waiters = this.#waiters.get(key);
      if (waiters === undefined) this.#waiters.set(key, (waiters = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', aborted);
        waiters.delete(wake);
        if (waiters.size === 0) this.#waiters.delete(key);
      };
      const wake = (): void => {
        done();
        resolve();
      };
      const aborted = (): void => {
        done();
        reject(signal?.reason);
      };
      const timer = setTimeout(wake, ms);
      waiters.add(wake);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}
