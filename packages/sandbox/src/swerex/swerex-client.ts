/**
 * Wire contract: SWE-ReX 1.4 HTTP client (swerex-protocol.md §2–§8) reached through the veFaaS gateway
 * (vefaas-api.md §3).
 * Every request carries: `X-API-Key` (when non-empty), `Authorization: <gatewayKey>` (when set), the instance
 * pin both as header `X-Faas-Instance-Name` and query `faasInstanceName` (when set), and — except `GET /is_alive`
 * — an `X-Request-ID` UUID that is reused on retries of the same call so the server replays instead of re-running.
 * Endpoints: GET /is_alive, POST /create_session, /run_in_session, /close_session, /execute, /read_file,
 * /write_file, /upload (multipart), /close. Bodies always contain every model field (models.ts).
 * Errors: see response-errors.ts (511 → SwerexRuntimeError; SWEREX_AUTH / GATEWAY_AUTH; GATEWAY_ERROR;
 * SANDBOX_DEAD; SWEREX_HTTP; SWEREX_NETWORK; SWEREX_TIMEOUT) and SANDBOX_START_TIMEOUT from waitUntilAlive.
 * Retries: only retryable codes (network, timeout, gateway 5xx), bounded, with back-off; never 511 or auth.
 */
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { RolloutError, abortableDelay } from '@rollout-fleet/shared';
import { parseJsonObject, snippet, type GatewayRules } from './classify-gateway-response.js';
import { dispatcherFor } from './dispatcher-registry.js';
import {
  BashActionSchema,
  BashInterruptActionSchema,
  BashObservationSchema,
  CloseBashSessionRequestSchema,
  CloseBashSessionResponseSchema,
  CommandResponseSchema,
  CommandSchema,
  CreateBashSessionRequestSchema,
  CreateBashSessionResponseSchema,
  EmptyResponseSchema,
  IsAliveResponseSchema,
  ReadFileRequestSchema,
  ReadFileResponseSchema,
  WriteFileRequestSchema,
  type BashActionInput,
  type BashInterruptActionInput,
  type BashObservation,
  type CloseBashSessionResponse,
  type CloseResponse,
  type CommandInput,
  type CommandResponse,
  type CreateBashSessionRequestInput,
  type CreateBashSessionResponse,
  type IsAliveResponse,
  type ReadFileRequestInput,
  type ReadFileResponse,
  type UploadResponse,
  type WriteFileRequest,
  type WriteFileResponse,
} from './models.js';
import { fastBashAction, fastResponse } from './fast-models.js';
import { errorForTransportFailure, type CallContext } from './response-errors.js';
import { withRetry, type RetryOptions } from '../vefaas/retry-policy.js';
import { probePauseMs } from './probe-schedule.js';
import type { TruncatedField } from './bounded-body.js';
import { SwerexTransport, type WireRequest, type WireResponse } from './swerex-transport.js';
import { buildUploadForm, type UploadRequest } from './upload-form.js';

const SECOND = 1000;

/** Structural subset of a pino logger, so tests and callers can pass any compatible logger. */
export interface SwerexLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  /** pino's: when it says debug is off when the client is made, no per-call debug record is built. */
  isLevelEnabled?(level: string): boolean;
}

export interface SwerexClientOptions {
  /** Gateway route URL including an optional path prefix (query parameters are kept), or a direct SWE-ReX URL. */
  baseUrl: string;
  /** Sandbox id to pin requests to; sent as `X-Faas-Instance-Name` header and `faasInstanceName` query. */
  instanceName?: string;
  /** SWE-ReX `X-API-Key`; an empty string sends no header. */
  apiKey: string;
  /** Gateway key sent verbatim as the `Authorization` header (include `Bearer ` yourself if the route wants it). */
  gatewayKey?: string;
  /** Longest string value kept from an answer (see SwerexTransportOptions). @defaultValue 16 MiB */
  maxResponseBytes?: number;
  /** Injected dispatcher; by default a process-wide keep-alive pool for the base URL's origin (dispatcherFor). */
  dispatcher?: Dispatcher;
  /** Connect timeout of the shared pool (only when it is created by this client). @defaultValue 10 s */
  connectTimeoutMs?: number;
  /** Added to a command's own timeout to get the HTTP timeout. @defaultValue 30 s */
  timeoutMarginMs?: number;
  /** HTTP timeout of calls without a command timeout (files, sessions, close). @defaultValue 60 s */
  defaultTimeoutMs?: number;
  /** Extra attempts for calls replayable by `X-Request-ID`, on retryable failures only. @defaultValue 2 */
  retries?: number;
  /** Back-off between retries (full jitter). @defaultValue minDelayMs 100 ms, maxDelayMs 5 s, as the reference client */
  backoff?: SwerexBackoff;
  /** How gateway answers (dead instance, 5xx, gateway auth) are recognised. */
  gatewayRules?: GatewayRules;
  logger?: SwerexLogger;
}

export type SwerexBackoff = Pick<RetryOptions, 'minDelayMs' | 'maxDelayMs'>;

export interface CallOptions {
  /** Aborts the call; the rejection is the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the computed HTTP timeout; 0 disables it. */
  timeoutMs?: number;
  /** Overrides the client's `retries` for this call. */
  retries?: number;
}

export interface IsAliveOptions {
  /** HTTP timeout of the probe. @defaultValue 5 s */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface WaitUntilAliveOptions {
  /** Give up after this long with SANDBOX_START_TIMEOUT. */
  timeoutMs: number;
  /** Shortest pause between probes (and the first one). @defaultValue 100 ms */
  intervalMs?: number;
  /** Longest pause between probes. @defaultValue 2 s */
  maxIntervalMs?: number;
  /**
   * Longest pause as a fraction of the time waited so far (probe-schedule.ts): a sandbox that comes up just
   * after a probe is found at most this fraction of its start time late. @defaultValue 0.1
   */
  overshoot?: number;
  /** HTTP timeout of each probe (bounded by the time left). @defaultValue 5 s */
  attemptTimeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Called after a probe finds the pinned instance gone (SANDBOX_DEAD); throw to stop waiting. A gateway may
   * not know an instance that is still starting, so only the caller (DescribeSandbox) can tell "Failed" apart.
   */
  onDead?: (error: RolloutError) => Promise<void>;
}

/** Fields of an answer cut to head + marker + tail while it was read, by name, with their true sizes. */
export interface Truncation {
  truncated?: Record<string, TruncatedField>;
}

export type InterruptOptions = Omit<BashInterruptActionInput, 'session' | 'action_type'> & CallOptions;

/** A `/run_in_session` body: a command, or an interrupt chosen by `action_type: 'bash_interrupt'`. */
export type RunInSessionInput = BashActionInput | (BashInterruptActionInput & { action_type: 'bash_interrupt' });

interface Call<S extends z.ZodType> {
  method: 'GET' | 'POST';
  endpoint: string;
  body?: WireRequest['body'];
  contentType?: string;
  /** HTTP timeout in ms; 0 = none. */
  httpTimeoutMs: number;
  schema: S;
}

export class SwerexClient {
  readonly #transport: SwerexTransport;
  readonly #marginMs: number;
  readonly #defaultTimeoutMs: number;
  readonly #retries: number;
  readonly #backoff: SwerexBackoff;
  readonly #logger: SwerexLogger | undefined;

  constructor(options: SwerexClientOptions) {
    const logger = options.logger;
    this.#transport = new SwerexTransport({
      baseUrl: options.baseUrl,
      instanceName: options.instanceName,
      apiKey: options.apiKey,
      gatewayKey: options.gatewayKey,
      dispatcher:
        options.dispatcher ??
        dispatcherFor(options.baseUrl, {
          connectTimeoutMs: options.connectTimeoutMs,
          ...(options.instanceName ? { shardKey: options.instanceName } : {}),
        }),
      gatewayRules: options.gatewayRules,
      ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
      // A client lives for one sandbox: whether debug records are wanted is decided when it is made (pino's
      // isLevelEnabled on every call was ~1 % of a busy worker's CPU).
      onExchange:
        logger === undefined || logger.isLevelEnabled?.('debug') === false
          ? undefined
          : (record) => logger.debug(record, 'SWE-ReX call'),
    });
    this.#marginMs = options.timeoutMarginMs ?? 30 * SECOND;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 60 * SECOND;
    this.#retries = options.retries ?? 2;
    this.#backoff = { minDelayMs: 100, maxDelayMs: 5 * SECOND, ...options.backoff };
    this.#logger = logger;
  }

  /** The sandbox id requests are pinned to, if any. */
  get instanceName(): string | undefined {
    return this.#transport.instanceName;
  }

  /** The dispatcher requests go through (the shared per-origin pool unless one was injected). */
  get dispatcher(): Dispatcher {
    return this.#transport.dispatcher;
  }

  /**
   * `GET /is_alive`. Like the reference client: a non-200 answer or a connection failure is "not alive" with a
   * message saying why; a 511 is thrown. The server runs one request at a time, so a slow answer during a long
   * command means busy, not dead.
   */
  async isAlive(options: IsAliveOptions = {}): Promise<IsAliveResponse> {
    return (await this.#probe(options)).response;
  }

  /**
   * Polls `/is_alive` until it answers alive, pausing a tenth of the time waited so far (probe-schedule.ts);
   * SANDBOX_START_TIMEOUT with the last message otherwise.
   */
  async waitUntilAlive(options: WaitUntilAliveOptions): Promise<IsAliveResponse> {
    const started = Date.now();
    const deadline = started + options.timeoutMs;
    const minIntervalMs = options.intervalMs ?? 100;
    const maxIntervalMs = Math.max(minIntervalMs, options.maxIntervalMs ?? 2 * SECOND);
    const overshoot = options.overshoot ?? 0.1;
    const attemptTimeoutMs = options.attemptTimeoutMs ?? 5 * SECOND;
    let tries = 0;
    let lastMessage: string | undefined;
    for (;;) {
      const probeTimeoutMs = Math.min(attemptTimeoutMs, Math.max(1, deadline - Date.now()));
      const probe = await this.#probe({ timeoutMs: probeTimeoutMs, signal: options.signal });
      tries++;
      if (probe.response.is_alive) return probe.response;
      // A rejected key will not fix itself by waiting.
      if (probe.error?.code === 'SWEREX_AUTH' || probe.error?.code === 'GATEWAY_AUTH') throw probe.error;
      if (probe.error?.code === 'SANDBOX_DEAD' && options.onDead) await options.onDead(probe.error);
      // A final probe cut short by the overall deadline says less than the answer before it.
      const cutShort = probe.error?.code === 'SWEREX_TIMEOUT' && probeTimeoutMs < attemptTimeoutMs;
      if (!cutShort || lastMessage === undefined) lastMessage = probe.response.message;
      const now = Date.now();
      const left = deadline - now;
      if (left <= 0) {
        throw new RolloutError(
          'SANDBOX_START_TIMEOUT',
          `Runtime did not start within ${options.timeoutMs / SECOND}s (tried to connect ${tries} times). ` +
            `The last await response was:\n${lastMessage}`,
          { details: { instanceName: this.instanceName, tries, lastMessage } },
        );
      }
      await abortableDelay(
        Math.min(probePauseMs(now - started, { minIntervalMs, maxIntervalMs, overshoot }), left),
        options.signal,
      );
    }
  }

  async createSession(
    request: CreateBashSessionRequestInput = {},
    options: CallOptions = {},
  ): Promise<CreateBashSessionResponse> {
    const body = parseRequest(CreateBashSessionRequestSchema, request);
    const httpTimeoutMs = this.#commandTimeout(body.startup_timeout);
    return this.#postJson(
      { endpoint: 'create_session', body, schema: CreateBashSessionResponseSchema, httpTimeoutMs },
      options,
    );
  }

  /** `POST /run_in_session`. HTTP timeout = command timeout + margin; none for `timeout: null`. */
  async runInSession(action: RunInSessionInput, options: CallOptions = {}): Promise<BashObservation & Truncation> {
    if (action.action_type === 'bash_interrupt') return this.#interrupt(action, options);
    const body = fastBashAction(action) ?? parseRequest(BashActionSchema, action);
    const httpTimeoutMs = this.#commandTimeout(body.timeout);
    return this.#postJson({ endpoint: 'run_in_session', body, schema: BashObservationSchema, httpTimeoutMs }, options);
  }

  /** Ctrl-C the session's running command (`/run_in_session` with `action_type: "bash_interrupt"`). */
  async interrupt(session = 'default', options: InterruptOptions = {}): Promise<BashObservation> {
    const { signal, timeoutMs, retries, ...fields } = options;
    return this.#interrupt({ ...fields, session, action_type: 'bash_interrupt' }, { signal, timeoutMs, retries });
  }

  async closeSession(session = 'default', options: CallOptions = {}): Promise<CloseBashSessionResponse> {
    const body = parseRequest(CloseBashSessionRequestSchema, { session });
    const httpTimeoutMs = this.#defaultTimeoutMs;
    return this.#postJson(
      { endpoint: 'close_session', body, schema: CloseBashSessionResponseSchema, httpTimeoutMs },
      options,
    );
  }

  /** `POST /execute`: one subprocess outside any session. */
  async execute(command: CommandInput, options: CallOptions = {}): Promise<CommandResponse & Truncation> {
    const body = parseRequest(CommandSchema, command);
    const httpTimeoutMs = this.#commandTimeout(body.timeout);
    return this.#postJson({ endpoint: 'execute', body, schema: CommandResponseSchema, httpTimeoutMs }, options);
  }

  async readFile(request: ReadFileRequestInput, options: CallOptions = {}): Promise<ReadFileResponse> {
    const body = parseRequest(ReadFileRequestSchema, request);
    const httpTimeoutMs = this.#defaultTimeoutMs;
    return this.#postJson({ endpoint: 'read_file', body, schema: ReadFileResponseSchema, httpTimeoutMs }, options);
  }

  async writeFile(request: WriteFileRequest, options: CallOptions = {}): Promise<WriteFileResponse> {
    const body = parseRequest(WriteFileRequestSchema, request);
    const httpTimeoutMs = this.#defaultTimeoutMs;
    return this.#postJson({ endpoint: 'write_file', body, schema: EmptyResponseSchema, httpTimeoutMs }, options);
  }

  /** `POST /upload`: a file under its basename, or a directory zipped and extracted into `targetPath`. */
  async upload(request: UploadRequest, options: CallOptions = {}): Promise<UploadResponse> {
    // Built once: a FormData of Blobs (or the encoded bytes) can be re-sent as-is on a retry.
    const { body, contentType } = await buildUploadForm(request);
    const httpTimeoutMs = this.#defaultTimeoutMs;
    return this.#call(
      {
        method: 'POST',
        endpoint: 'upload',
        body,
        ...(contentType ? { contentType } : {}),
        schema: EmptyResponseSchema,
        httpTimeoutMs,
      },
      options,
    );
  }

  /** `POST /close`: closes every session's shell on the server (the sandbox keeps running). */
  async close(options: CallOptions = {}): Promise<CloseResponse> {
    const httpTimeoutMs = this.#defaultTimeoutMs;
    return this.#call({ method: 'POST', endpoint: 'close', schema: EmptyResponseSchema, httpTimeoutMs }, options);
  }

  async #interrupt(action: BashInterruptActionInput, options: CallOptions): Promise<BashObservation> {
    const body = parseRequest(BashInterruptActionSchema, action);
    // Worst case on the server: n_retry × (timeout + 0.2 s pause), then Ctrl-Z and `kill -9 %1` with their waits.
    const httpTimeoutMs = this.#commandTimeout(body.n_retry * (body.timeout + 0.2) + 2 * Math.max(body.timeout, 1));
    return this.#postJson({ endpoint: 'run_in_session', body, schema: BashObservationSchema, httpTimeoutMs }, options);
  }

  #commandTimeout(seconds: number | null): number {
    return seconds === null ? 0 : Math.ceil(seconds * SECOND) + this.#marginMs;
  }

  // Not async, like #call: a pass-through adds no await frame to every in-flight request (memory note in #call).
  #postJson<S extends z.ZodType>(
    call: { endpoint: string; body: unknown; schema: S; httpTimeoutMs: number },
    options: CallOptions,
  ): Promise<z.output<S> & Truncation> {
    return this.#call(
      {
        method: 'POST',
        endpoint: call.endpoint,
        body: JSON.stringify(call.body),
        schema: call.schema,
        httpTimeoutMs: call.httpTimeoutMs,
      },
      options,
    );
  }

  /** One logical call: a single request id for all its attempts, so a retry is replayed rather than re-run. */
  //
  // Memory: a worker holds one of these per in-flight command (a thousand at once, each 50 ms to minutes), and
  // what a request holds while it waits outlives the young generation and is promoted. So the objects here are
  // plain literals of one shape (an object spread gives every result its own hidden class: ~300 bytes more, per
  // request) and the pass-through layers are not async functions (each suspended frame holds ~0.5 KB).
  #call<S extends z.ZodType>(call: Call<S>, options: CallOptions): Promise<z.output<S> & Truncation> {
    const requestId = randomUUID();
    // Built only when needed (an error, a retry): most calls never need it.
    const context = (): CallContext => this.#transport.context(call.endpoint, requestId);
    const request: WireRequest = {
      method: call.method,
      endpoint: call.endpoint,
      body: call.body,
      contentType: call.contentType,
      requestId,
      timeoutMs: options.timeoutMs ?? call.httpTimeoutMs,
      signal: options.signal,
    };
    return withRetry(
      () =>
        this.#transport.send(request).then((response) => {
          const json = this.#transport.expectOk(response, context);
          const parsed = (fastResponse(call.schema, json) ??
            parseResponse(call.schema, json, context())) as z.output<S> & Truncation;
          if (Object.keys(response.truncated).length > 0) parsed.truncated = response.truncated;
          return parsed;
        }),
      {
        minDelayMs: this.#backoff.minDelayMs,
        maxDelayMs: this.#backoff.maxDelayMs,
        retries: options.retries ?? this.#retries,
        signal: options.signal,
        sleep: abortableDelay,
        onRetry: ({ error, retry, delayMs }) =>
          this.#logger?.warn(
            { ...context(), code: codeOf(error), attempt: retry, delayMs, reason: messageOf(error) },
            'retrying SWE-ReX call',
          ),
      },
    );
  }

  async #probe(options: IsAliveOptions): Promise<{ response: IsAliveResponse; error?: RolloutError }> {
    const context = this.#transport.context('is_alive');
    let response: WireResponse;
    try {
      // No X-Request-ID: the server keeps a single replay slot, and a probe must not evict the id of a call
      // that may still need to be retried.
      response = await this.#transport.send({
        method: 'GET',
        endpoint: 'is_alive',
        timeoutMs: options.timeoutMs ?? 5 * SECOND,
        signal: options.signal,
      });
    } catch (thrown) {
      if (options.signal?.aborted) throw options.signal.reason;
      const error = errorForTransportFailure(thrown, context);
      const message = `Failed to connect to ${this.#transport.publicUrl('')}\n${error.message}`;
      return { response: { is_alive: false, message }, error };
    }
    if (response.status === 200) {
      const json = parseJsonObject(response.text);
      return {
        response: fastResponse(IsAliveResponseSchema, json) ?? parseResponse(IsAliveResponseSchema, json, context),
      };
    }
    const error = this.#transport.errorFor(response, context);
    // As the reference client: a runtime exception is raised, every other status only means "not alive".
    if (response.status === 511 && error.code !== 'SWEREX_HTTP') throw error;
    const detail = parseJsonObject(response.text)?.['detail'];
    const message = `Status code ${response.status} from ${this.#transport.publicUrl('is_alive')}. Message: ${
      typeof detail === 'string' ? detail : snippet(response.text)
    }`;
    return { response: { is_alive: false, message }, error };
  }
}

function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RolloutError('INPUT_INVALID', `invalid SWE-ReX request: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

function parseResponse<S extends z.ZodType>(schema: S, json: unknown, context: CallContext): z.output<S> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new RolloutError(
      'SWEREX_HTTP',
      `unexpected SWE-ReX response body on ${context.path}: ${parsed.error.message}`,
      {
        cause: parsed.error,
        details: { ...context },
      },
    );
  }
  return parsed.data;
}

function codeOf(error: unknown): string | undefined {
  return error instanceof RolloutError ? error.code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
