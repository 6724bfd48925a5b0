/**
 * Wire contract: telling the API gateway's own answers apart from SWE-ReX's (vefaas-api.md §3, §6 item 1).
 * Inputs: the HTTP status, headers and body text of one data-plane response.
 * Output: whose answer it is —
 *   upstream  SWE-ReX answered (any 2xx, 511 `swerexception`, FastAPI `{"detail": ...}` 401/403/404/405/422)
 *   dead      the pinned instance is gone: JSON `{"error":{"code":"InstanceNotFound"}}` with any status, or any
 *             other 404/410 whose body is not SWE-ReX's (vefaas-local's default; real veFaaS is undocumented)
 *   transient 502/503/504 from the gateway (retryable)
 *   auth      401/403 that is not SWE-ReX's `{"detail": ...}` (gateway Key-Auth)
 * The real gateway's answer for a dead instance is UNCERTAIN, so the recognition is data (`GatewayRules`).
 */

export interface GatewayRules {
  /** Statuses meaning "instance gone" when the body is not SWE-ReX's own. @defaultValue [404, 410] */
  deadStatuses?: readonly number[];
  /** `error.code` values of a JSON body meaning "instance gone", whatever the status. @defaultValue ['InstanceNotFound'] */
  deadErrorCodes?: readonly string[];
  /** Statuses that are transient gateway failures. @defaultValue [502, 503, 504] */
  transientStatuses?: readonly number[];
}

export type GatewayVerdict =
  | { kind: 'upstream' }
  | { kind: 'dead'; reason: string }
  | { kind: 'transient'; reason: string }
  | { kind: 'auth'; reason: string };

export type ResponseHeaders = Readonly<Record<string, string | string[] | undefined>>;

const DEFAULT_DEAD_STATUSES: readonly number[] = [404, 410];
const DEFAULT_DEAD_CODES: readonly string[] = ['InstanceNotFound'];
const DEFAULT_TRANSIENT_STATUSES: readonly number[] = [502, 503, 504];

export function classifyGatewayResponse(
  status: number,
  _headers: ResponseHeaders,
  body: string,
  rules: GatewayRules = {},
): GatewayVerdict {
  if (status >= 200 && status < 300) return { kind: 'upstream' };
  const json = parseJsonObject(body);
  const errorCode = gatewayErrorCode(json);
  const reason = `HTTP ${status}${errorCode === undefined ? '' : ` ${errorCode}`}: ${snippet(body)}`;

  if (errorCode !== undefined && (rules.deadErrorCodes ?? DEFAULT_DEAD_CODES).includes(errorCode)) {
    return { kind: 'dead', reason };
  }
  // SWE-ReX itself never answers 5xx other than 511, so these are the gateway's whatever the body says.
  if ((rules.transientStatuses ?? DEFAULT_TRANSIENT_STATUSES).includes(status)) return { kind: 'transient', reason };
  if (isSwerexBody(json)) return { kind: 'upstream' };
  if ((rules.deadStatuses ?? DEFAULT_DEAD_STATUSES).includes(status)) return { kind: 'dead', reason };
  if (status === 401 || status === 403) return { kind: 'auth', reason };
  return { kind: 'upstream' };
}

/** SWE-ReX (FastAPI) error bodies: `{"detail": ...}` for HTTP errors, `{"swerexception": {...}}` for 511. */
function isSwerexBody(json: Record<string, unknown> | undefined): boolean {
  return json !== undefined && ('detail' in json || 'swerexception' in json);
}

function gatewayErrorCode(json: Record<string, unknown> | undefined): string | undefined {
  const error = json?.['error'];
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as Record<string, unknown>)['code'];
  return typeof code === 'string' ? code : undefined;
}

export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const SNIPPET_CHARS = 300;

/** A short, single-line excerpt of a response body for error messages. */
export function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat;
}
