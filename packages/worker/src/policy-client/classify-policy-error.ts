/**
 * Wire contract: an OpenAI-compatible endpoint's failure → one typed RolloutError (codes.ts decides class and
 * retryability). Error bodies come as `{error: {message, type, param, code}}` (OpenAI, current vLLM), flat
 * `{message, type, param, code}` (old vLLM; SGLang adds `object: "error"`), or plain text.
 *   400/413/422 naming the context length  → POLICY_CONTEXT_OVERFLOW  (a model finish: graded)
 *   other 400/422, other 4xx               → POLICY_REJECTED          (configuration: fail fast)
 *   401/403                                → POLICY_AUTH
 *   404                                    → POLICY_NOT_FOUND
 *   408                                    → POLICY_TIMEOUT           (retried per turn)
 *   429                                    → POLICY_THROTTLED         (retried per turn, Retry-After honoured)
 *   5xx                                    → POLICY_SERVER_ERROR      (retried per turn)
 *   connect/socket failures                → POLICY_NETWORK           (retried per turn)
 */
import { RolloutError } from '@rollout-fleet/shared';
import { parseJsonObject, snippet, errorCodeOf } from '@rollout-fleet/sandbox';

/** The parts of an error body that matter, whichever envelope it came in. */
export interface PolicyErrorBody {
  message: string;
  type?: string;
  param?: string;
}

export function parseErrorBody(text: string): PolicyErrorBody {
  const json = parseJsonObject(text);
  const inner = json?.['error'];
  const envelope =
    typeof inner === 'object' && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : json;
  const message = envelope?.['message'] ?? (typeof inner === 'string' ? inner : undefined) ?? json?.['detail'];
  const body: PolicyErrorBody = { message: typeof message === 'string' ? message : snippet(text) };
  if (typeof envelope?.['type'] === 'string') body.type = envelope['type'];
  if (typeof envelope?.['param'] === 'string') body.param = envelope['param'];
  return body;
}

/**
 * Context-overflow wordings, by server and era (policy-loop.md §2): old vLLM and OpenAI ("maximum context length
 * is N tokens"), vLLM's renderer ("context length is only N tokens"), current vLLM builds ("your prompt contains at
 * least P input tokens"), SGLang ("is longer than the model's context length", "exceeds the model's maximum
 * context length").
 */
const OVERFLOW_WORDINGS = [
  /maximum context length is \d+ tokens/i,
  /context length is only \d+ tokens/i,
  /prompt contains at least \d+ input tokens/i,
  /is longer than the model'?s context length/i,
  /exceeds the model'?s maximum context length/i,
];
/** vLLM names the offending parameter of an overflow: the prompt's tokens, or its characters in the pre-check. */
const OVERFLOW_PARAMS = new Set(['input_tokens', 'input_text']);

export function isContextOverflow(body: PolicyErrorBody): boolean {
  if (body.param !== undefined && OVERFLOW_PARAMS.has(body.param)) return true;
  return OVERFLOW_WORDINGS.some((wording) => wording.test(body.message));
}

const MESSAGE_CHARS = 500;

/** Seconds or an HTTP date in Retry-After, as milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function errorForPolicyResponse(input: {
  status: number;
  text: string;
  url: string;
  retryAfter?: string | string[] | undefined;
}): RolloutError {
  const { status, url } = input;
  const body = parseErrorBody(input.text);
  const said = body.message.slice(0, MESSAGE_CHARS);
  const details: Record<string, unknown> = {
    status,
    url,
    ...(body.type ? { type: body.type } : {}),
    ...(body.param ? { param: body.param } : {}),
  };
  const wait = retryAfterMs(input.retryAfter);
  if (wait !== undefined) details.retryAfterMs = wait;
  if ((status === 400 || status === 413 || status === 422) && isContextOverflow(body)) {
    return new RolloutError('POLICY_CONTEXT_OVERFLOW', `context overflow (HTTP ${status}): ${said}`, { details });
  }
  if (status === 401 || status === 403)
    return new RolloutError('POLICY_AUTH', `policy endpoint refused the key (HTTP ${status}): ${said}`, { details });
  if (status === 404)
    return new RolloutError('POLICY_NOT_FOUND', `policy endpoint answered 404 for ${url}: ${said}`, { details });
  if (status === 408)
    return new RolloutError('POLICY_TIMEOUT', `policy endpoint timed out the request (HTTP 408): ${said}`, { details });
  if (status === 429)
    return new RolloutError('POLICY_THROTTLED', `policy endpoint is throttling (HTTP 429): ${said}`, { details });
  if (status >= 500)
    return new RolloutError('POLICY_SERVER_ERROR', `policy endpoint failed (HTTP ${status}): ${said}`, { details });
  return new RolloutError('POLICY_REJECTED', `policy endpoint rejected the request (HTTP ${status}): ${said}`, {
    details,
  });
}

/** Errors that are our own bugs (bad arguments), not the network's; never retried. */
const PROGRAMMING_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_URL',
]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export function errorForPolicyTransport(thrown: unknown, url: string): RolloutError {
  if (thrown instanceof RolloutError) return thrown;
  const code = errorCodeOf(thrown);
  const text = thrown instanceof Error ? thrown.message : String(thrown);
  const details = { url, cause: code };
  if (code !== undefined && PROGRAMMING_CODES.has(code)) {
    return new RolloutError('INTERNAL', `invalid policy request to ${url}: ${text}`, { cause: thrown, details });
  }
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new RolloutError('POLICY_TIMEOUT', `no answer from the policy endpoint ${url} in time (${text})`, {
      cause: thrown,
      details,
    });
  }
  return new RolloutError(
    'POLICY_NETWORK',
    `policy endpoint ${url} unreachable or dropped the connection (${code ?? text})`,
    { cause: thrown, details },
  );
}
