/**
 * Request-level retry policy: exponential back-off with full jitter, bounded in attempts and delay, applied only
 * to errors the error table marks retryable. Transport-agnostic: it wraps any `() => Promise<T>`.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { coerceError } from '@rollout-fleet/shared';

const SECOND = 1000;

export interface RetryEvent {
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  error: unknown;
}

export interface RetryOptions {
  /** Retries after the first attempt (so at most retries + 1 calls). @defaultValue 3 */
  retries?: number;
  /**
   * Base of the back-off: retry n (1-based) waits up to `minDelayMs * 2^(n-1)`, capped at maxDelayMs.
   * @defaultValue 300 (the Volcengine SDKs' minimum retry delay)
   */
  minDelayMs?: number;
  /** Upper bound of any single wait. @defaultValue 30 * SECOND */
  maxDelayMs?: number;
  /**
   * Full jitter: wait a uniformly random time in [0, window] so that many workers throttled at once do not
   * retry in lock-step. `false` waits exactly the window. @defaultValue true
   */
  jitter?: boolean;
  /** Source of randomness in [0, 1); injectable for deterministic tests. @defaultValue Math.random */
  random?: () => number;
  /** Aborts waiting and further attempts; the abort reason is thrown. */
  signal?: AbortSignal;
  /** Called before each wait (e.g. to log the retry). */
  onRetry?: (event: RetryEvent) => void;
  /** Whether an error may be retried. @defaultValue err => coerceError(err).retryable */
  isRetryable?: (error: unknown) => boolean;
  /** Injectable wait, for tests. @defaultValue a timer that rejects when `signal` aborts */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRY = { retries: 3, minDelayMs: 300, maxDelayMs: 30 * SECOND } as const;

/** The wait before retry n (1-based). Exported for tests and for callers that log planned delays. */
export function backoffDelayMs(
  retry: number,
  options: Pick<RetryOptions, 'minDelayMs' | 'maxDelayMs' | 'jitter' | 'random'> = {},
): number {
  const min = options.minDelayMs ?? DEFAULT_RETRY.minDelayMs;
  const max = options.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs;
  const window = Math.min(max, min * 2 ** (retry - 1));
  if (options.jitter === false) return window;
  return Math.floor((options.random ?? Math.random)() * window);
}

async function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  await delay(ms, undefined, signal ? { signal } : {});
}

/**
 * Calls `fn` until it resolves, a non-retryable error, `retries` retries or the signal's abort.
 *
 * A promise chain rather than an async function: a suspended async frame (~0.5 KB with its registers and promise)
 * would be held for as long as `fn` runs, and a worker keeps a thousand SWE-ReX calls in flight for 50 ms to
 * minutes each — long enough to be promoted to the old generation (bench:concurrency's RSS).
 */
export function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const retries = options.retries ?? DEFAULT_RETRY.retries;
  const { signal } = options;
  const attempt = (retry: number): Promise<T> => {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let pending: Promise<T>;
    try {
      pending = fn();
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.catch((error: unknown) => {
      const isRetryable = options.isRetryable ?? ((err: unknown) => coerceError(err).retryable);
      if (retry >= retries || !isRetryable(error) || signal?.aborted) throw error;
      const delayMs = backoffDelayMs(retry + 1, options);
      options.onRetry?.({ retry: retry + 1, delayMs, error });
      return (options.sleep ?? defaultSleep)(delayMs, signal).then(() => attempt(retry + 1));
    });
  };
  return attempt(0);
}
