/**
 * Wire contract: one HTTP exchange with a SWE-ReX server behind the veFaaS gateway (vefaas-api.md §3).
 * Headers: `X-API-Key` (when non-empty), `Authorization: <gatewayKey>` (when set), `X-Faas-Instance-Name` and
 * query `faasInstanceName` (when pinned), `X-Request-ID` (when the caller gives one), JSON or multipart body.
 * Output: status/headers/text of the answer; `expectOk` turns non-2xx into typed errors (response-errors.ts).
 * Throws SWEREX_TIMEOUT (deadline), SWEREX_NETWORK (connect/socket), or the caller's abort reason.
 * No retries here: that is the caller's policy.
 */
import type { Dispatcher, FormData } from 'undici';
import { RolloutError } from '../errors/rollout-error.js';
import { readBoundedBody, type TruncatedField } from './bounded-body.js';
import { classifyGatewayResponse, parseJsonObject, type GatewayRules } from './classify-gateway-response.js';
import { errorForResponse, errorForTransportFailure, type CallContext } from './response-errors.js';

export interface SwerexTransportOptions {
  baseUrl: string;
  instanceName?: string;
  apiKey: string;
  gatewayKey?: string;
  dispatcher: Dispatcher;
  gatewayRules?: GatewayRules;
  /**
   * Longest string value kept from an answer, bytes: a longer one (a command's 500 MB output) keeps its head
   * and tail around a marker while it is read, so memory stays bounded. @defaultValue 16 MiB
   */
  maxResponseBytes?: number;
  /** Receives one debug record per exchange (never headers: they hold keys). */
  onExchange?: (record: CallContext & { status: number; ms: number }) => void;
}

export interface WireRequest {
  method: 'GET' | 'POST';
  /** Endpoint name without slash, e.g. `run_in_session`. */
  endpoint: string;
  /** A string is sent as JSON. */
  body?: string | FormData;
  requestId?: string;
  /** Deadline for the whole exchange in ms; 0 = none. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Top-level fields whose string value was cut to head + marker + tail while reading, with their true sizes. */
  truncated: Record<string, TruncatedField>;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export class SwerexTransport {
  readonly instanceName: string | undefined;
  readonly dispatcher: Dispatcher;
  readonly #base: URL;
  readonly #apiKey: string;
  readonly #gatewayKey: string | undefined;
  readonly #rules: GatewayRules | undefined;
  readonly #onExchange: SwerexTransportOptions['onExchange'];
  readonly #maxResponseBytes: number;
  /** Request path (with the pin's query) per endpoint: built once, not parsed again on every request. */
  readonly #paths = new Map<string, string>();

  constructor(options: SwerexTransportOptions) {
    this.#base = new URL(options.baseUrl);
    this.instanceName = options.instanceName === '' ? undefined : options.instanceName;
    this.#apiKey = options.apiKey;
    this.#gatewayKey = options.gatewayKey === '' ? undefined : options.gatewayKey;
    this.dispatcher = options.dispatcher;
    this.#rules = options.gatewayRules;
    this.#onExchange = options.onExchange;
    this.#maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** Error/log context of a call (no secrets). */
  context(endpoint: string, requestId?: string): CallContext {
    return {
      path: `/${endpoint}`,
      ...(requestId === undefined ? {} : { requestId }),
      ...(this.instanceName === undefined ? {} : { instanceName: this.instanceName }),
    };
  }

  async send(request: WireRequest): Promise<WireResponse> {
    const context = this.context(request.endpoint, request.requestId);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#apiKey !== '') headers['x-api-key'] = this.#apiKey;
    if (this.#gatewayKey !== undefined) headers['authorization'] = this.#gatewayKey;
    if (this.instanceName !== undefined) headers['x-faas-instance-name'] = this.instanceName;
    if (request.requestId !== undefined) headers['x-request-id'] = request.requestId;
    if (typeof request.body === 'string') headers['content-type'] = 'application/json';
    // One deadline for the whole exchange: undici's headers/body timeouts have ~1 s resolution and restart per
    // chunk. The connect timeout is the pool's. A plain controller and timer, both released as soon as the
    // exchange ends: AbortSignal.timeout/any per request kept a timer and weak references alive for the whole
    // timeout and showed up as garbage-collection time at a thousand steps a second.
    const controller = new AbortController();
    let timedOut = false;
    const timer =
      request.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort();
          }, request.timeoutMs)
        : undefined;
    timer?.unref();
    const caller = request.signal;
    const onAbort = (): void => controller.abort(caller?.reason);
    if (caller?.aborted) onAbort();
    else caller?.addEventListener('abort', onAbort, { once: true });
    const startedAt = Date.now();
    try {
      const res = await this.dispatcher.request({
        origin: this.#base.origin,
        path: this.#pathFor(request.endpoint),
        method: request.method,
        headers,
        body: request.body ?? null,
        headersTimeout: 0,
        bodyTimeout: 0,
        signal: controller.signal,
      });
      const { text, truncated } = await readBoundedBody(res.body, this.#maxResponseBytes);
      this.#onExchange?.({ ...context, status: res.statusCode, ms: Date.now() - startedAt });
      return { status: res.statusCode, headers: res.headers, text, truncated };
    } catch (thrown) {
      if (caller?.aborted) throw caller.reason;
      if (timedOut) {
        throw new RolloutError('SWEREX_TIMEOUT', `no answer from SWE-ReX on ${context.path} within ${request.timeoutMs} ms`, {
          cause: thrown,
          details: { ...context, timeoutMs: request.timeoutMs },
        });
      }
      throw errorForTransportFailure(thrown, context);
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    }
  }

  /** The parsed JSON body of a 2xx answer; any other answer becomes its typed error. */
  expectOk(response: WireResponse, context: CallContext): Record<string, unknown> | undefined {
    if (response.status >= 200 && response.status < 300) return parseJsonObject(response.text);
    throw this.errorFor(response, context);
  }

  errorFor(response: WireResponse, context: CallContext): RolloutError {
    const verdict = classifyGatewayResponse(response.status, response.headers, response.text, this.#rules);
    return errorForResponse({ status: response.status, body: response.text, verdict, context });
  }

  /** URL for messages: no query string, because a gateway key may travel there (`?Authorization=`). */
  publicUrl(endpoint: string): string {
    const url = this.#urlFor(endpoint);
    return `${url.origin}${url.pathname}`;
  }

  #pathFor(endpoint: string): string {
    let path = this.#paths.get(endpoint);
    if (path === undefined) {
      const url = this.#urlFor(endpoint);
      path = `${url.pathname}${url.search}`;
      this.#paths.set(endpoint, path);
    }
    return path;
  }

  #urlFor(endpoint: string): URL {
    const url = new URL(this.#base.href);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/${endpoint}`;
    if (this.instanceName !== undefined) url.searchParams.set('faasInstanceName', this.instanceName);
    return url;
  }
}
