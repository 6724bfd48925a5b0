/**
 * One model turn's request, with the policy around the transport: take a fleet-wide inflight slot (waiting is
 * not an error), send, and on an infra failure (connection, timeout, 429, 5xx, engine error) back off and send
 * the same request again — up to `retries` times, without spending the model's turn budget. Anything not
 * retryable (context overflow, configuration errors) is thrown at once; so is the last infra failure.
 * The time spent waiting and failing is reported as infrastructure time, apart from the request that succeeded.
 * A slot is held only while a request is in flight: back-off waits hold none. An aborted signal (cancel, a forced
 * re-run, shutdown, a lost lease) aborts the request in flight or the wait, and gives its slot back at once.
 */
import { abortableDelay, coerceError, type Logger, type RolloutError } from '@rollout-fleet/shared';
import { backoffDelayMs } from '@rollout-fleet/sandbox';
import { type ParsedCompletion } from '../policy-client/parse-completion.js';
import { type PolicyClient } from '../policy-client/policy-client.js';
import type { InflightLimiter, InflightSlot } from './inflight-limiter.js';

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
  metrics?: PolicyRequestMetrics;
}

/** What a worker's metrics see of its policy requests (prom-client gauges and counters fit). */
export interface PolicyRequestMetrics {
  /** Turns of this process waiting for an inflight slot of their endpoint. */
  slotWaiters: { inc(): void; dec(): void };
  /** Requests of this process in flight to policy endpoints. */
  inflight: { inc(): void; dec(): void };
  /** Failed requests (retried or not), by failure code; aborted ones are not failures. */
  failures: { inc(labels: { code: string }): void };
}

/** A Retry-After beyond this is not waited for in one go: the turn retries sooner and is told again. */
const MAX_RETRY_AFTER_MS = 60 * SECOND;

export function createTurnRequester(options: TurnRequesterOptions): TurnRequester {
  const minDelayMs = options.minBackoffMs ?? SECOND;
  const maxDelayMs = options.maxBackoffMs ?? 30 * SECOND;
  const metrics = options.metrics;
  return async ({ body, fallbackToolCallId, signal }) => {
    const retryCodes: string[] = [];
    let slotWaitMs = 0;
    let infraMs = 0;
    for (let attempt = 0; ; attempt += 1) {
      let slot: InflightSlot | undefined;
      if (options.limiter) {
        metrics?.slotWaiters.inc();
        try {
          slot = await options.limiter.acquire(options.baseUrl, signal);
        } finally {
          metrics?.slotWaiters.dec();
        }
        slotWaitMs += slot.waitedMs;
        infraMs += slot.waitedMs;
      }
      const started = performance.now();
      let failed: RolloutError;
      metrics?.inflight.inc();
      try {
        const { completion, latencyMs } = await options.client.complete({
          body,
          timeoutMs: options.requestTimeoutMs,
          fallbackToolCallId,
          ...(signal ? { signal } : {}),
        });
        return { completion, latencyMs, retries: attempt, retryCodes, slotWaitMs, infraMs };
      } catch (thrown) {
        // A cancelled / superseded / shut-down episode: the request was aborted; nothing to retry or count.
        if (signal?.aborted) throw signal.reason;
        failed = coerceError(thrown);
        infraMs += performance.now() - started;
        metrics?.failures.inc({ code: failed.code });
      } finally {
        metrics?.inflight.dec();
        // The slot is for a request in flight: given back at once — before any back-off, so a throttled or failing
        // turn never sits on capacity other turns could use. Not awaited: the slot is free as soon as ZREM lands
        // (release() logs its own failures, and an unreleased slot expires by itself).
        void slot?.release();
      }
      if (!failed.retryable || failed.class !== 'infra' || attempt >= options.retries) {
        if (attempt > 0 && failed.class === 'infra')
          failed.message = `${failed.message} (after ${attempt} retries of this turn: ${retryCodes.join(', ')})`;
        throw failed;
      }
      retryCodes.push(failed.code);
      const hinted =
        typeof failed.details.retryAfterMs === 'number' ? Math.min(failed.details.retryAfterMs, MAX_RETRY_AFTER_MS) : 0;
      const delayMs = Math.max(hinted, backoffDelayMs(attempt + 1, { minDelayMs, maxDelayMs }));
      options.logger?.warn(
        { code: failed.code, retry: attempt + 1, delayMs },
        'policy request failed; retrying this turn',
      );
      const waitStarted = performance.now();
      await abortableDelay(delayMs, signal);
      infraMs += performance.now() - waitStarted;
    }
  };
}
