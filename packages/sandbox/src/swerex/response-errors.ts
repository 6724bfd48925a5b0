/**
 * Wire contract: SWE-ReX/gateway failures → typed RolloutErrors.
 *   511 swerexception            → SwerexRuntimeError (code by class_path)
 *   401/403 from SWE-ReX         → SWEREX_AUTH      (never retried)
 *   401/403 from the gateway     → GATEWAY_AUTH     (never retried)
 *   502/503/504 from the gateway → GATEWAY_ERROR    (retryable)
 *   dead/unknown instance        → SANDBOX_DEAD
 *   any other status ≥ 400       → SWEREX_HTTP
 *   connect/socket failures      → SWEREX_NETWORK   (retryable)
 *   connect/headers/body timeout → SWEREX_TIMEOUT   (retryable)
 */
import { RolloutError } from '@rollout-fleet/shared';
import { parseJsonObject, snippet, type GatewayVerdict } from './classify-gateway-response.js';
import { SwerexExceptionBodySchema } from './models.js';
import { SwerexRuntimeError } from './swerex-runtime-error.js';

/** Context attached to every error as `details` (no secrets: it is logged). */
export interface CallContext {
  path: string;
  requestId?: string;
  instanceName?: string;
}

export function errorForResponse(input: {
  status: number;
  body: string;
  verdict: GatewayVerdict;
  context: CallContext;
}): RolloutError {
  const { status, body, verdict, context } = input;
  const details = { ...context, status };
  switch (verdict.kind) {
    case 'dead':
      return new RolloutError('SANDBOX_DEAD', `sandbox instance is gone (${verdict.reason})`, { details });
    case 'transient':
      return new RolloutError('GATEWAY_ERROR', `gateway error on ${context.path} (${verdict.reason})`, { details });
    case 'auth':
      return new RolloutError('GATEWAY_AUTH', `gateway rejected the request (${verdict.reason})`, { details });
    case 'upstream':
      break;
  }
  const json = parseJsonObject(body);
  if (status === 511) {
    const parsed = SwerexExceptionBodySchema.safeParse(json);
    if (parsed.success) {
      const e = parsed.data.swerexception;
      return new SwerexRuntimeError({
        classPath: e.class_path,
        message: e.message,
        extraInfo: e.extra_info,
        traceback: e.traceback,
        details,
      });
    }
  }
  const detail = json?.['detail'];
  const detailText = typeof detail === 'string' ? detail : snippet(body);
  if (status === 401 || status === 403) {
    return new RolloutError('SWEREX_AUTH', `SWE-ReX rejected the API key on ${context.path}: ${detailText}`, {
      details,
    });
  }
  return new RolloutError('SWEREX_HTTP', `SWE-ReX answered HTTP ${status} on ${context.path}: ${detailText}`, {
    details,
  });
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);
/** Errors that are our own bugs (bad arguments), not the network's; never retried. */
const PROGRAMMING_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_URL',
]);

/** Maps a thrown transport error (undici/Node) to SWEREX_TIMEOUT, SWEREX_NETWORK or INTERNAL. */
export function errorForTransportFailure(thrown: unknown, context: CallContext): RolloutError {
  if (thrown instanceof RolloutError) return thrown;
  const code = errorCodeOf(thrown);
  const text = thrown instanceof Error ? thrown.message : String(thrown);
  const details = { ...context, cause: code };
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new RolloutError('SWEREX_TIMEOUT', `no answer from SWE-ReX on ${context.path} in time (${text})`, {
      cause: thrown,
      details,
    });
  }
  if (code !== undefined && PROGRAMMING_CODES.has(code)) {
    return new RolloutError('INTERNAL', `invalid SWE-ReX request on ${context.path}: ${text}`, {
      cause: thrown,
      details,
    });
  }
  return new RolloutError('SWEREX_NETWORK', `cannot reach SWE-ReX on ${context.path}: ${text}`, {
    cause: thrown,
    details,
  });
}

/** The Node/undici error code of a thrown transport error (or of its cause). */
export function errorCodeOf(thrown: unknown): string | undefined {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  const code = (thrown as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Node wraps some socket failures: the system error code sits on the cause.
  return errorCodeOf((thrown as { cause?: unknown }).cause);
}
