/**
 * One model turn's request, with the policy around the transport: take a fleet-wide inflight slot (waiting is
 * not an error), send, and on an infra failure (connection, timeout, 429, 5xx, engine error) back off and send
 * the same request again — up to `retries` times, without spending the model's turn budget. Anything not
 * retryable (context overflow, configuration errors) is thrown at once; so is the last infra failure.
 * The time spent waiting and failing is reported as infrastructure time, apart from the request that succeeded.
 */
import { abortableDelay, backoffDelayMs, coerceError, type Logger, type ParsedCompletion, type PolicyClient } from '@rollout-fleet/shared';
import type { InflightLimiter } from './inflight-limiter.js';

const SECOND = 1000;

export interface TurnResponse {
  completion: ParsedCompletion;
  /** The successful request's latency, ms. */
  latencyMs: number;
  retries: number;
  retryCodes: string[];
  slotWaitMs: number;
  /** Slot waits, failed requests and back-off, ms: not the agent's time. */
  infraMs: number;
}

export interface TurnRequestInput {
  body: Record<string, unknown>;
  fallbackToolCallId: (index: number) => string;
  signal?: AbortSignal;
}

export type TurnRequester = (input: TurnRequestInput) => Promise<TurnResponse>;

export interface TurnRequesterOptions {
  client: PolicyClient;
  /** The endpoint's API root, naming its inflight slots. */
  baseUrl: string;
  limiter?: InflightLimiter;
  retries: number;
  requestTimeoutMs: number;
  /** @defaultValue 1 s */
  minBackoffMs?: number;
  /** @defaultValue 30 s */
  maxBackoffMs?: number;
  logger?: Logger;
}

/** A Retry-After beyond this is not waited for in one go: the turn retries sooner and is told again. */
const MAX_RETRY_AFTER_MS = 60 * SECOND;

export function createTurnRequester(options: TurnRequesterOptions): TurnRequester {
  const minDelayMs = options.minBackoffMs ?? SECOND;
  const maxDelayMs = options.maxBackoffMs ?? 30 * SECOND;
  return async ({ body, fallbackToolCallId, signal }) => {
    const retryCodes: string[] = [];
    let slotWaitMs = 0;
    let infraMs = 0;
    for (let attempt = 0; ; attempt += 1) {
      const slot = options.limiter ? await options.limiter.acquire(options.baseUrl, signal) : undefined;
      slotWaitMs += slot?.waitedMs ?? 0;
      infraMs += slot?.waitedMs ?? 0;
      const started = performance.now();
      try {
        const { completion, latencyMs } = await options.client.complete({
          body,
          timeoutMs: options.requestTimeoutMs,
          fallbackToolCallId,
          ...(signal ? { signal } : {}),
        });
        return { completion, latencyMs, retries: attempt, retryCodes, slotWaitMs, infraMs };
      } catch (thrown) {
        if (signal?.aborted) throw signal.reason;
        const err = coerceError(thrown);
        infraMs += performance.now() - started;
        if (!err.retryable || err.class !== 'infra' || attempt >= options.retries) {
          if (attempt > 0 && err.class === 'infra') err.message = `${err.message} (after ${attempt} retries of this turn: ${retryCodes.join(', ')})`;
          throw err;
        }
        retryCodes.push(err.code);
        const hinted = typeof err.details.retryAfterMs === 'number' ? Math.min(err.details.retryAfterMs, MAX_RETRY_AFTER_MS) : 0;
        const delayMs = Math.max(hinted, backoffDelayMs(attempt + 1, { minDelayMs, maxDelayMs }));
        options.logger?.warn({ code: err.code, retry: attempt + 1, delayMs }, 'policy request failed; retrying this turn');
        const waitStarted = performance.now();
        await abortableDelay(delayMs, signal);
        infraMs += performance.now() - waitStarted;
      } finally {
        // Not awaited: the slot is free as soon as ZREM lands; the turn need not wait for the round trip
        // (release() logs its own failures, and an unreleased slot expires by itself).
        void slot?.release();
      }
    }
  };
}
