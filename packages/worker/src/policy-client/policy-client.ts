/**
 * Wire contract: one non-streaming `POST <base_url>/chat/completions` to an OpenAI-compatible endpoint (vLLM,
 * SGLang, OpenAI). Headers: `content-type: application/json`, `authorization: Bearer <key>` when a key is given.
 * Output: the parsed completion (parse-completion.ts) and the request's latency. Failures are typed by
 * classify-policy-error.ts. No retries here: that is the caller's policy (one turn = retried with back-off).
 * The key lives only in the request header: it is in no error, detail or log record.
 */
import type { Dispatcher } from 'undici';
import { RolloutError } from '@rollout-fleet/shared';
import { dispatcherFor } from '@rollout-fleet/sandbox';
import { errorForPolicyResponse, errorForPolicyTransport } from './classify-policy-error.js';
import { parseCompletion, type ParsedCompletion } from './parse-completion.js';

export interface PolicyClientOptions {
  /** The API root, e.g. `http://10.0.0.5:8000/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** @defaultValue the process-wide keep-alive pool of the endpoint's origin */
  dispatcher?: Dispatcher;
}

export interface CompletionCall {
  body: Record<string, unknown>;
  /** Deadline of the whole exchange, ms. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Id for a tool call the server returned without one. */
  fallbackToolCallId: (index: number) => string;
}

export interface CompletionOutcome {
  completion: ParsedCompletion;
  latencyMs: number;
}

export class PolicyClient {
  /** `<base_url>/chat/completions`, for messages (holds no secret). */
  readonly url: string;
  readonly #target: URL;
  readonly #apiKey: string | undefined;
  readonly #dispatcher: Dispatcher;

  constructor(options: PolicyClientOptions) {
    this.#target = new URL(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`);
    this.url = `${this.#target.origin}${this.#target.pathname}`;
    this.#apiKey = options.apiKey === '' ? undefined : options.apiKey;
    this.#dispatcher = options.dispatcher ?? dispatcherFor(this.#target.origin);
  }

  async complete(call: CompletionCall): Promise<CompletionOutcome> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    // One deadline for the whole exchange, as a plain controller and timer released as soon as the exchange ends:
    // AbortSignal.timeout/any per request would keep a timer and weak references alive for the whole timeout
    // (minutes) — thousands of them at fleet rate (as the SWE-ReX transport found).
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, call.timeoutMs);
    timer.unref();
    const caller = call.signal;
    const onAbort = (): void => controller.abort(caller?.reason);
    if (caller?.aborted) onAbort();
    else caller?.addEventListener('abort', onAbort, { once: true });
    const started = performance.now();
    let status: number;
    let text: string;
    let retryAfter: string | string[] | undefined;
    try {
      const res = await this.#dispatcher.request({
        origin: this.#target.origin,
        path: `${this.#target.pathname}${this.#target.search}`,
        method: 'POST',
        headers,
        body: JSON.stringify(call.body),
        // One deadline for the whole exchange (generation can take minutes); undici's own timers restart per chunk.
        headersTimeout: 0,
        bodyTimeout: 0,
        signal: controller.signal,
      });
      status = res.statusCode;
      retryAfter = res.headers['retry-after'];
      text = await res.body.text();
    } catch (thrown) {
      if (caller?.aborted) throw caller.reason;
      if (timedOut) {
        throw new RolloutError(
          'POLICY_TIMEOUT',
          `no answer from the policy endpoint ${this.url} within ${Math.round(call.timeoutMs / 1000)} s`,
          {
            cause: thrown,
            details: { url: this.url, timeoutMs: call.timeoutMs },
          },
        );
      }
      throw errorForPolicyTransport(thrown, this.url);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    }
    const latencyMs = performance.now() - started;
    if (status < 200 || status >= 300) throw errorForPolicyResponse({ status, text, url: this.url, retryAfter });
    return { completion: parseCompletion(text, call.fallbackToolCallId), latencyMs };
  }
}
