/**
 * Wire contract: one HTTP exchange with a SWE-ReX server behind the veFaaS gateway (vefaas-api.md §3).
 * Headers: `X-API-Key` (when non-empty), `Authorization: <gatewayKey>` (when set), `X-Faas-Instance-Name` and
 * query `faasInstanceName` (when pinned), `X-Request-ID` (when the caller gives one), JSON or multipart body.
 * Output: status/headers/text of the answer; `expectOk` turns non-2xx into typed errors (response-errors.ts).
 * Throws SWEREX_TIMEOUT (deadline), SWEREX_NETWORK (connect/socket), or the caller's abort reason.
 * No retries here: that is the caller's policy.
 */
import type { Dispatcher, FormData } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import { RolloutError } from '@rollout-fleet/shared';
import { BoundedBodyCollector, type TruncatedField } from './bounded-body.js';
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
  /** A string is sent as JSON; bytes are sent as they are, with `contentType`. */
  body?: string | FormData | Buffer;
  /** The content type of a bytes body (a multipart body encoded ahead). */
  contentType?: string;
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

  /**
   * Not an async function (like SwerexClient's #call): the exchange's promise chain is all a request holds while it
   * waits, which matters at a thousand requests in flight (bench:concurrency's RSS).
   */
  send(request: WireRequest): Promise<WireResponse> {
    const caller = request.signal;
    if (caller?.aborted) return Promise.reject(caller.reason);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.#apiKey !== '') headers['x-api-key'] = this.#apiKey;
    if (this.#gatewayKey !== undefined) headers['authorization'] = this.#gatewayKey;
    if (this.instanceName !== undefined) headers['x-faas-instance-name'] = this.instanceName;
    if (request.requestId !== undefined) headers['x-request-id'] = request.requestId;
    if (typeof request.body === 'string') headers['content-type'] = 'application/json';
    else if (request.contentType !== undefined) headers['content-type'] = request.contentType;
    const startedAt = Date.now();
    // undici's handler interface directly, not `request()`: that one wraps every answer in a Readable stream
    // (read here through an async iterator) and every call in an AbortSignal listener — at a thousand calls a
    // second those were a visible share of the worker's CPU and garbage. The answer is collected as it comes.
    const exchange = new Exchange(request, caller, this.#maxResponseBytes);
    try {
      this.dispatcher.dispatch(
        {
          origin: this.#base.origin,
          path: this.#pathFor(request.endpoint),
          method: request.method,
          headers,
          body: request.body ?? null,
          headersTimeout: 0,
          bodyTimeout: 0,
        },
        exchange,
      );
    } catch (thrown) {
      // Refused before it started (a closed pool, an invalid request): the exchange's timer and listener go too.
      exchange.fail(thrown instanceof Error ? thrown : new Error(String(thrown)));
    }
    return exchange.done.then(
      (response) => {
        if (this.#onExchange)
          this.#onExchange({
            ...this.context(request.endpoint, request.requestId),
            status: response.status,
            ms: Date.now() - startedAt,
          });
        return response;
      },
      (thrown: unknown) => {
        if (caller?.aborted) throw caller.reason;
        const context = this.context(request.endpoint, request.requestId);
        if (exchange.timedOut) {
          throw new RolloutError(
            'SWEREX_TIMEOUT',
            `no answer from SWE-ReX on ${context.path} within ${request.timeoutMs} ms`,
            {
              cause: thrown,
              details: { ...context, timeoutMs: request.timeoutMs },
            },
          );
        }
        throw errorForTransportFailure(thrown, context);
      },
    );
  }

  /** The parsed JSON body of a 2xx answer; any other answer becomes its typed error. */
  expectOk(response: WireResponse, context: CallContext | (() => CallContext)): Record<string, unknown> | undefined {
    if (response.status >= 200 && response.status < 300) return parseJsonObject(response.text);
    throw this.errorFor(response, typeof context === 'function' ? context() : context);
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

/**
 * One exchange as an undici dispatch handler: the answer's chunks go into a bounded collector, `done` settles
 * once. One deadline for the whole exchange (undici's headers/body timeouts have ~1 s resolution and restart
 * per chunk; the connect timeout is the pool's): a plain timer, cleared as soon as the exchange ends. The
 * caller's signal aborts the exchange through one listener, removed at the end too.
 */
class Exchange implements Dispatcher.DispatchHandler {
  readonly done: Promise<WireResponse>;
  timedOut = false;
  #resolve!: (response: WireResponse) => void;
  #reject!: (reason: unknown) => void;
  #settled = false;
  /** Why the exchange was stopped before undici started it (it is aborted as soon as it starts). */
  #stopped: Error | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  readonly #body: BoundedBodyCollector;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #caller: AbortSignal | undefined;
  readonly #onAbort: (() => void) | undefined;

  constructor(request: WireRequest, caller: AbortSignal | undefined, maxResponseBytes: number) {
    this.done = new Promise<WireResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#body = new BoundedBodyCollector(maxResponseBytes);
    if (request.timeoutMs > 0) {
      this.#timer = setTimeout(() => {
        this.timedOut = true;
        this.#stop(new Error(`timed out after ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      this.#timer.unref();
    }
    if (caller) {
      this.#caller = caller;
      this.#onAbort = () =>
        this.#stop(caller.reason instanceof Error ? caller.reason : new Error(String(caller.reason)));
      caller.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#stopped) controller.abort(this.#stopped);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational answer (1xx) precedes the real one.
    if (statusCode < 200) return;
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#body.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settle()) return;
    const { text, truncated } = this.#body.finish();
    this.#resolve({ status: this.#status, headers: this.#headers, text, truncated });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  /** Settles the exchange with `error` (undici's, or a dispatch that threw). */
  fail(error: Error): void {
    if (this.#settle()) return;
    this.#reject(error);
  }

  /** Timeout or the caller's abort: the exchange is aborted (now, or when undici starts it) and fails at once. */
  #stop(reason: Error): void {
    if (this.#settle()) return;
    this.#stopped = reason;
    this.#controller?.abort(reason);
    this.#reject(reason);
  }

  /** Marks the exchange settled and releases its timer and listener; true when it already was. */
  #settle(): boolean {
    if (this.#settled) return true;
    this.#settled = true;
    clearTimeout(this.#timer);
    if (this.#onAbort) this.#caller?.removeEventListener('abort', this.#onAbort);
    return false;
  }
}
