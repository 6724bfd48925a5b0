/**
 * Wire contract: Volcengine top-gateway response envelope (vefaas-api.md §1.1, §1.2).
 *   success → 200 {ResponseMetadata:{RequestId, Action, Version, Service:"vefaas", Region}, Result}
 *   error   → non-2xx {ResponseMetadata:{..., Error:{Code, CodeN?, Message}}} and no Result
 */
import { randomBytes } from 'node:crypto';

export const API_VERSION = '2024-06-06';
export const SERVICE = 'vefaas';

/** Code → [HTTP status, CodeN] of the top-gateway common errors (CodeN only where the spec gives one). */
const KNOWN_ERRORS: Record<string, readonly [number, number | undefined]> = {
  MissingParameter: [400, 100002],
  MissingAuthenticationToken: [401, 100003],
  MissingSignature: [401, 100005],
  InvalidTimestamp: [403, 100006],
  InvalidActionOrVersion: [404, 100008],
  InvalidAccessKey: [401, 100009],
  SignatureDoesNotMatch: [401, 100010],
  AccessDenied: [403, 100013],
  InternalError: [500, 100014],
  AccountFlowLimitExceeded: [429, 100027],
  InvalidAuthorization: [400, undefined],
  InvalidParameter: [400, undefined],
  ResourceNotFound: [404, undefined],
};

/** A control-plane error answered with the error envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly codeN: number | undefined;

  constructor(code: string, message: string, status?: number) {
    super(message);
    const known = KNOWN_ERRORS[code];
    this.code = code;
    this.status = status ?? known?.[0] ?? 400;
    this.codeN = known?.[1];
  }
}

export const sandboxNotFound = (): ApiError => new ApiError('ResourceNotFound', 'Sandbox not found');
export const missingParameter = (name: string): ApiError =>
  new ApiError('MissingParameter', `The required parameter ${name} is missing`);
export const invalidParameter = (name: string, why: string): ApiError =>
  new ApiError('InvalidParameter', `The parameter ${name} is invalid: ${why}`);

/** UTC `YYYYMMDDhhmmss` + 20 uppercase hex digits, the shape real request ids have. */
export function newRequestId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return stamp + randomBytes(10).toString('hex').toUpperCase();
}

export interface ResponseMetadata {
  RequestId: string;
  Action: string;
  Version: string;
  Service: string;
  Region: string;
  Error?: { Code: string; CodeN?: number; Message: string };
}

export function successBody(meta: ResponseMetadata, result: unknown): string {
  return JSON.stringify({ ResponseMetadata: meta, Result: result });
}

export function errorBody(meta: ResponseMetadata, error: ApiError): string {
  const body: ResponseMetadata = {
    ...meta,
    Error: { Code: error.code, ...(error.codeN === undefined ? {} : { CodeN: error.codeN }), Message: error.message },
  };
  return JSON.stringify({ ResponseMetadata: body });
}
