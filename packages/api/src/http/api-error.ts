/**
 * How failures reach API clients: one HTTP status per error code (this table, nowhere else) and one JSON body
 * shape (contracts/common.ts), built from the code's entry in the shared error table.
 */
import type { Response } from 'express';
import { ERROR_CODES, RolloutError, coerceError, type ErrorCode, type Logger } from '@rollout-fleet/shared';
import type { ApiErrorBody, ProblemBody } from '../contracts/common.js';

const STATUS: Partial<Record<ErrorCode, number>> = {
  API_UNAUTHORIZED: 401,
  API_FORBIDDEN: 403,
  API_NOT_FOUND: 404,
  RUN_NOT_FOUND: 404,
  RUN_CANCELLED: 409,
  SESSION_NOT_FOUND: 404,
  SESSION_CLOSED: 410,
  SANDBOX_DEAD: 410,
  SANDBOX_ACQUIRE_TIMEOUT: 503,
  INPUT_TOO_LARGE: 413,
  INPUT_INVALID: 422,
  INPUT_DUPLICATE: 422,
  // A session's image the platform cannot start: the request named it, so the request is at fault.
  SANDBOX_IMAGE_UNAVAILABLE: 422,
  REDIS_UNAVAILABLE: 503,
  VEFAAS_THROTTLED: 503,
  INTERNAL: 500,
  CONFIG_INVALID: 500,
};

/** Seconds a client should wait before sending a 503'd request again. */
const RETRY_AFTER_S = 5;

export function statusFor(code: ErrorCode): number {
  // Other input errors are the request's fault; other infra errors come from something behind the API.
  return STATUS[code] ?? (ERROR_CODES[code].class === 'input' ? 400 : 502);
}

export function errorBody(err: RolloutError): ApiErrorBody {
  const problems = err.details.problems as ProblemBody[] | undefined;
  const didYouMean = err.details.didYouMean as string[] | undefined;
  return {
    error: {
      code: err.code,
      class: err.class,
      retryable: err.retryable,
      message: err.message,
      hint: err.hint,
      ...(problems ? { problems } : {}),
      ...(didYouMean ? { did_you_mean: didYouMean } : {}),
    },
  };
}

/** Answers with the error's status and body; unexpected errors are logged and answered as INTERNAL. */
export function sendError(res: Response, thrown: unknown, logger: Logger): void {
  const err = coerceError(thrown);
  const status = statusFor(err.code);
  if (status >= 500) logger.error({ err }, 'api: request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (status === 503) res.setHeader('Retry-After', String(RETRY_AFTER_S));
  res.status(status).json(errorBody(err));
}

/** A RolloutError to answer with (thrown by route handlers). */
export function apiError(code: ErrorCode, message: string, details: Record<string, unknown> = {}): RolloutError {
  return new RolloutError(code, message, { details });
}
