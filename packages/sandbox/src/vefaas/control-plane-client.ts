/**
 * veFaaS control-plane transport: one signed HTTP call per method, failures mapped to RolloutError.
 * Wire contract (vefaas-api.md §1):
 *   request:  POST <endpoint>/?Action=<Action>&Version=2024-06-06, Content-Type: application/json,
 *             PascalCase JSON body (unset fields omitted), Volcengine V4 signature (service `vefaas`, §2)
 *   response: {ResponseMetadata:{RequestId,…}, Result} on success;
 *             {ResponseMetadata:{…, Error:{Code, CodeN?, Message}}} on failure — usually non-2xx, but an Error on
 *             HTTP 200 is a failure too
 *   errors:   VEFAAS_NOT_FOUND | VEFAAS_THROTTLED | VEFAAS_AUTH | VEFAAS_BAD_REQUEST | VEFAAS_SERVER_ERROR
 *             (see control-plane-errors.ts), VEFAAS_TIMEOUT (per-request deadline), VEFAAS_NETWORK (no response)
 * No retries here: a CallPolicy (see create-vefaas-client.ts) is composed around every call.
 */
import { Agent, request, type Dispatcher } from 'undici';
import { linkedAbort, RolloutError } from '@rollout-fleet/shared';
import { toVefaasError } from './control-plane-errors.js';
import {
  VEFAAS_API_VERSION,
  type CreateSandboxRequest,
  type CreateSandboxResult,
  type DescribeSandboxRequest,
  type DescribeSandboxResult,
  type KillSandboxRequest,
  type KillSandboxResult,
  type ListSandboxesRequest,
  type ListSandboxesResult,
  type ResponseEnvelope,
  type SandboxListItem,
  type SandboxStatus,
  type SetSandboxTimeoutRequest,
  type SetSandboxTimeoutResult,
} from './control-plane-types.js';
import { signRequest, type Credentials } from './signing.js';

const SECOND = 1000;

/** Wraps each call (one action = one logical request, possibly several attempts). */
export type CallPolicy = <T>(call: { action: string; signal?: AbortSignal }, attempt: () => Promise<T>) => Promise<T>;

export interface VefaasCallOptions {
  /** Cancels the call (including back-off waits); the abort reason is thrown as is. */
  signal?: AbortSignal;
  /** Overrides the client's per-request deadline for this call, e.g. for a slow CreateSandbox. */
  timeoutMs?: number;
  /**
   * Exactly one request, bypassing the retry policy: a CreateSandbox that timed out may still create a
   * sandbox, so the fleet's supply looks it up by label instead of sending it again. @defaultValue false
   */
  once?: boolean;
}

export interface VefaasClientOptions {
  /** Control-plane base URL, e.g. `https://open.volcengineapi.com` or a local `http://127.0.0.1:<port>`. */
  endpoint: string | URL;
  /** Signing region, e.g. `cn-beijing`. */
  region: string;
  credentials: Credentials;
  /** @defaultValue 'vefaas' */
  service?: string;
  /** @defaultValue '2024-06-06' */
  version?: string;
  /**
   * Deadline per HTTP request (connect + headers + body). CreateSandbox returns only once the instance is
   * assigned, and SWE-RL clients use 40–120 s. @defaultValue 60 * SECOND
   */
  timeoutMs?: number;
  /** Bring your own undici dispatcher (not closed by close()). @defaultValue a keep-alive Agent owned by the client */
  dispatcher?: Dispatcher;
  /** Composed around every call; the default calls once. */
  policy?: CallPolicy;
  /** Clock for X-Date. @defaultValue () => new Date() */
  now?: () => Date;
}

export interface ListAllSandboxesOptions extends VefaasCallOptions {
  /** Keep only these statuses (filtered here: the server rejects a Status filter). */
  statuses?: readonly SandboxStatus[];
  /** Safety bound on the walk. @defaultValue 1000 */
  maxPages?: number;
}

const callOnce: CallPolicy = (_call, attempt) => attempt();

/** Node/undici error codes meaning "no usable response": the request may or may not have reached the server. */
function isTimeoutCode(code: unknown): boolean {
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class VefaasClient {
  readonly region: string;
  private readonly endpoint: URL;
  private readonly credentials: Credentials;
  private readonly service: string;
  private readonly version: string;
  private readonly timeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly policy: CallPolicy;
  private readonly now: () => Date;

  constructor(options: VefaasClientOptions) {
    this.endpoint = new URL(options.endpoint);
    this.region = options.region;
    this.credentials = options.credentials;
    this.service = options.service ?? 'vefaas';
    this.version = options.version ?? VEFAAS_API_VERSION;
    this.timeoutMs = options.timeoutMs ?? 60 * SECOND;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ?? new Agent({ keepAliveTimeout: 10 * SECOND, keepAliveMaxTimeout: 60 * SECOND });
    this.policy = options.policy ?? callOnce;
    this.now = options.now ?? (() => new Date());
  }

  createSandbox(req: CreateSandboxRequest, opts?: VefaasCallOptions): Promise<CreateSandboxResult> {
    return this.call<CreateSandboxResult>('CreateSandbox', req, opts);
  }

  describeSandbox(req: DescribeSandboxRequest, opts?: VefaasCallOptions): Promise<DescribeSandboxResult> {
    return this.call<DescribeSandboxResult>('DescribeSandbox', req, opts);
  }

  killSandbox(req: KillSandboxRequest, opts?: VefaasCallOptions): Promise<KillSandboxResult> {
    return this.call<KillSandboxResult>('KillSandbox', req, opts);
  }

  setSandboxTimeout(req: SetSandboxTimeoutRequest, opts?: VefaasCallOptions): Promise<SetSandboxTimeoutResult> {
    return this.call<SetSandboxTimeoutResult>('SetSandboxTimeout', req, opts);
  }

  /** One page. */
  listSandboxes(req: ListSandboxesRequest, opts?: VefaasCallOptions): Promise<ListSandboxesResult> {
    return this.call<ListSandboxesResult>('ListSandboxes', req, opts);
  }

  /**
   * Walks every page (PageNumber 1, 2, …) until Total is reached or a page comes back short. Items are
   * de-duplicated by Id because sandboxes created or killed during the walk shift page boundaries.
   */
  async listAllSandboxes(
    req: Omit<ListSandboxesRequest, 'PageNumber'>,
    opts: ListAllSandboxesOptions = {},
  ): Promise<SandboxListItem[]> {
    const pageSize = req.PageSize ?? 100;
    const maxPages = opts.maxPages ?? 1000;
    const byId = new Map<string, SandboxListItem>();
    for (let page = 1; page <= maxPages; page++) {
      const result = await this.listSandboxes({ ...req, PageNumber: page, PageSize: pageSize }, opts);
      const items = Array.isArray(result.Sandboxes) ? result.Sandboxes : [];
      for (const item of items) byId.set(item.Id, item);
      const total = typeof result.Total === 'number' ? result.Total : Number.POSITIVE_INFINITY;
      if (items.length < pageSize || page * pageSize >= total) break;
    }
    const all = [...byId.values()];
    return opts.statuses ? all.filter((s) => opts.statuses?.includes(s.Status)) : all;
  }

  /** Any action of the API version, for actions without a typed method (e.g. ListTriggers). */
  call<T>(action: string, body: object, opts: VefaasCallOptions = {}): Promise<T> {
    if (opts.once) return this.send<T>(action, body, opts);
    const call = opts.signal ? { action, signal: opts.signal } : { action };
    return this.policy(call, () => this.send<T>(action, body, opts));
  }

  /** Closes the owned keep-alive agent; an injected dispatcher is left to its owner. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async send<T>(action: string, body: object, opts: VefaasCallOptions): Promise<T> {
    const url = new URL(this.endpoint);
    if (url.pathname === '') url.pathname = '/';
    url.search = `Action=${encodeURIComponent(action)}&Version=${encodeURIComponent(this.version)}`;
    // Serialise once: the signed hash must cover exactly the bytes sent.
    const payload = JSON.stringify(body);
    const headers = signRequest(
      {
        method: 'POST',
        url,
        headers: { 'Content-Type': 'application/json' },
        body: payload,
        region: this.region,
        service: this.service,
        date: this.now(),
      },
      this.credentials,
    );

    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    // The caller's signal and the deadline, as a linked controller and a plain timer, both released when the call
    // ends: not AbortSignal.timeout + AbortSignal.any, whose weak references (~2 KB per call in Node 20) outlive
    // the call until a major collection, and a CreateSandbox is held for seconds, so they reach the old generation.
    const link = linkedAbort([opts.signal]);
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      link.abort(new DOMException(`veFaaS ${action} timed out after ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    deadline.unref();
    const context = { action, timeoutMs };

    let httpStatus: number;
    let text: string;
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body: payload,
        dispatcher: this.dispatcher,
        signal: link.signal,
      });
      httpStatus = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const code = (err as { code?: unknown }).code;
      if (timedOut || isTimeoutCode(code)) {
        throw new RolloutError('VEFAAS_TIMEOUT', `veFaaS ${action} got no response within ${timeoutMs} ms`, {
          cause: err,
          details: context,
        });
      }
      throw new RolloutError('VEFAAS_NETWORK', `veFaaS ${action} failed before a response: ${(err as Error).message}`, {
        cause: err,
        details: { ...context, errno: typeof code === 'string' ? code : undefined },
      });
    } finally {
      clearTimeout(deadline);
      link.dispose();
    }
    return this.unwrap<T>(action, httpStatus, text);
  }

  private unwrap<T>(action: string, httpStatus: number, text: string): T {
    const parsed = parseJson(text);
    const envelope: ResponseEnvelope<T> = isObject(parsed) ? (parsed as ResponseEnvelope<T>) : {};
    const meta = isObject(envelope.ResponseMetadata) ? envelope.ResponseMetadata : {};
    const requestId = typeof meta.RequestId === 'string' ? meta.RequestId : undefined;
    const apiError = isObject(meta.Error) ? meta.Error : undefined;

    if (apiError || httpStatus < 200 || httpStatus >= 300) {
      throw toVefaasError({
        action,
        httpStatus,
        ...(typeof apiError?.Code === 'string' ? { apiCode: apiError.Code } : {}),
        ...(typeof apiError?.CodeN === 'number' ? { codeN: apiError.CodeN } : {}),
        ...(typeof apiError?.Message === 'string'
          ? { apiMessage: apiError.Message }
          : parsed === undefined && text !== ''
            ? { apiMessage: text.slice(0, 200) }
            : {}),
        ...(requestId === undefined ? {} : { requestId }),
      });
    }
    if (!isObject(envelope.Result)) {
      // KillSandbox answers `{}`; tolerate a missing Result only where nothing is expected back.
      if (action === 'KillSandbox' && envelope.Result === undefined && parsed !== undefined) return {} as T;
      throw new RolloutError('VEFAAS_API_ERROR', `veFaaS ${action} answered ${httpStatus} without a Result object`, {
        details: { action, httpStatus, requestId },
      });
    }
    return envelope.Result;
  }
}
