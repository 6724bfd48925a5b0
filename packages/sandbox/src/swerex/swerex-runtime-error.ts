import type { ErrorCode } from '@rollout-fleet/shared';
import { RolloutError } from '@rollout-fleet/shared';

/**
 * A SWE-ReX runtime exception that travelled as HTTP 511 `{"swerexception": {...}}` (swerex-protocol.md §5).
 * `message` is the server's text verbatim (callers show it as the observation); the code is chosen from
 * `classPath` by `codeForClassPath`.
 */
export class SwerexRuntimeError extends RolloutError {
  /** `<python module>.<class name>`, e.g. `swerex.exceptions.CommandTimeoutError`. */
  readonly classPath: string;
  /** Server-side `extra_info`, e.g. `{bash_stdout, bash_stderr}` for a syntax error. */
  readonly extraInfo: Readonly<Record<string, unknown>>;
  /** Server-side Python traceback; free text for debugging, kept out of `details` to keep logs short. */
  readonly traceback: string;

  constructor(init: {
    classPath: string;
    message: string;
    extraInfo?: Record<string, unknown>;
    traceback?: string;
    details?: Record<string, unknown>;
  }) {
    super(codeForClassPath(init.classPath), init.message, {
      details: { ...init.details, classPath: init.classPath, extraInfo: init.extraInfo ?? {} },
    });
    this.classPath = init.classPath;
    this.extraInfo = init.extraInfo ?? {};
    this.traceback = init.traceback ?? '';
  }
}

const CODE_BY_CLASS_PATH: Readonly<Record<string, ErrorCode>> = {
  'swerex.exceptions.CommandTimeoutError': 'SWEREX_COMMAND_TIMEOUT',
  'swerex.exceptions.BashIncorrectSyntaxError': 'SWEREX_BASH_SYNTAX',
  'swerex.exceptions.NonZeroExitCodeError': 'SWEREX_NONZERO_EXIT',
  'swerex.exceptions.NoExitCodeError': 'SWEREX_NO_EXIT_CODE',
  'swerex.exceptions.SessionDoesNotExistError': 'SWEREX_SESSION_MISSING',
  'swerex.exceptions.SessionExistsError': 'SWEREX_SESSION_EXISTS',
  // Raised for "Failed to interrupt session" and for a session start that never showed a prompt; callers that
  // start sessions re-code it (infra at sandbox start, model after the model broke its shell).
  'pexpect.exceptions.TIMEOUT': 'SWEREX_INTERRUPT_FAILED',
  // The session's shell exited (`exit`, `kill -9 $$`, an `exec` that ended).
  'pexpect.exceptions.EOF': 'SWEREX_SESSION_ENDED',
};

/** The error code for a server exception class; unknown classes (FileNotFoundError, ...) are SWEREX_RUNTIME. */
export function codeForClassPath(classPath: string): ErrorCode {
  return Object.hasOwn(CODE_BY_CLASS_PATH, classPath)
    ? (CODE_BY_CLASS_PATH[classPath] ?? 'SWEREX_RUNTIME')
    : 'SWEREX_RUNTIME';
}
