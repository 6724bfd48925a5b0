import { ERROR_CODES, type ErrorCode, type FailureClass } from './codes.js';

export interface RolloutErrorOptions {
  cause?: unknown;
  /** Structured context (status code, ids, file/line). Never put secrets here: it is logged. */
  details?: Record<string, unknown>;
}

/** The project's one error type: a stable `code` decides `class` and `retryable` (see codes.ts). */
export class RolloutError extends Error {
  override readonly name = 'RolloutError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: RolloutErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }

  get class(): FailureClass {
    return ERROR_CODES[this.code].class;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }

  get hint(): string {
    return ERROR_CODES[this.code].hint;
  }

  toJSON(): { code: ErrorCode; class: FailureClass; message: string; details: Record<string, unknown> } {
    return { code: this.code, class: this.class, message: this.message, details: this.details };
  }
}
