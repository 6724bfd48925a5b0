/**
 * Maps veFaaS control-plane failures (HTTP status + ResponseMetadata.Error, vefaas-api.md §1.2) to RolloutError
 * codes, whose retryability is decided in errors/codes.ts. Details never carry credentials or request bodies.
 */
import type { ErrorCode } from '@rollout-fleet/shared';
import { RolloutError } from '@rollout-fleet/shared';

export interface ApiFailure {
  action: string;
  httpStatus: number;
  /** ResponseMetadata.Error.Code, when the body had one. */
  apiCode?: string;
  /** ResponseMetadata.Error.CodeN. */
  codeN?: number;
  /** ResponseMetadata.Error.Message, or a short excerpt of a non-JSON body. */
  apiMessage?: string;
  requestId?: string;
}

const THROTTLE_CODES = new Set(['AccountFlowLimitExceeded', 'FlowLimitExceeded']);
/** CodeN values some clients map to throttling (vefaas-api.md §1.2, UNCERTAIN for vefaas). */
const THROTTLE_CODE_NS = new Set([100018, 100027]);
const AUTH_CODES = new Set([
  'SignatureDoesNotMatch',
  'InvalidAccessKey',
  'MissingAuthenticationToken',
  'InvalidTimestamp',
  'AccessDenied',
  'InvalidAuthorization',
  'InvalidCredential',
  'MissingSignature',
]);
const BAD_REQUEST_CODES = new Set(['InvalidParameter', 'MissingParameter', 'InvalidActionOrVersion']);
/** Cold-start timeouts surface as CreateSandbox errors and succeed when retried (DeerFlow backend). */
const COLD_START_MARKERS = ['UserTimeoutError', 'function_cold_start_timeout'];
const MAX_MESSAGE_CHARS = 500;

export function errorCodeForApiFailure(failure: ApiFailure): ErrorCode {
  const { httpStatus, apiCode = '', apiMessage = '' } = failure;
  if (apiCode === 'ResourceNotFound') return 'VEFAAS_NOT_FOUND';
  if (
    httpStatus === 429 ||
    THROTTLE_CODES.has(apiCode) ||
    (failure.codeN !== undefined && THROTTLE_CODE_NS.has(failure.codeN))
  ) {
    return 'VEFAAS_THROTTLED';
  }
  if (AUTH_CODES.has(apiCode)) return 'VEFAAS_AUTH';
  if (COLD_START_MARKERS.some((m) => apiCode.includes(m) || apiMessage.includes(m))) return 'VEFAAS_SERVER_ERROR';
  if (BAD_REQUEST_CODES.has(apiCode) || apiMessage.includes('Command is empty')) return 'VEFAAS_BAD_REQUEST';
  // A misspelled field was answered with a bare 400 (vefaas-api.md §1.2): the request, not the platform, is at fault.
  if (httpStatus === 400 && apiCode === '') return 'VEFAAS_BAD_REQUEST';
  if (apiCode === 'InternalError' || httpStatus >= 500) return 'VEFAAS_SERVER_ERROR';
  return 'VEFAAS_API_ERROR';
}

export function toVefaasError(failure: ApiFailure): RolloutError {
  const code = errorCodeForApiFailure(failure);
  const what = failure.apiCode ?? `HTTP ${failure.httpStatus}`;
  const message = failure.apiMessage ? `: ${failure.apiMessage.slice(0, MAX_MESSAGE_CHARS)}` : '';
  return new RolloutError(code, `veFaaS ${failure.action} failed with ${what}${message}`, {
    details: {
      action: failure.action,
      httpStatus: failure.httpStatus,
      apiCode: failure.apiCode,
      ...(failure.codeN === undefined ? {} : { codeN: failure.codeN }),
      requestId: failure.requestId,
    },
  });
}

/**
 * DescribeSandbox `ErrorCode`s of a sandbox that went `Failed` before it ever answered, mapped like API failures:
 * veFaaS says `function_initialize_failed` when the instance cannot be initialised from its image — missing,
 * misspelled, not pre-cached — which no retry changes: a configuration error (SANDBOX_IMAGE_UNAVAILABLE). Any other
 * reason (a health check that failed, no reason given) stays an infrastructure start failure, retried.
 */
const IMAGE_START_CODES = new Set(['function_initialize_failed']);

export function errorCodeForFailedStart(sandboxErrorCode: string | undefined): ErrorCode {
  return sandboxErrorCode !== undefined && IMAGE_START_CODES.has(sandboxErrorCode)
    ? 'SANDBOX_IMAGE_UNAVAILABLE'
    : 'SANDBOX_START_FAILED';
}
