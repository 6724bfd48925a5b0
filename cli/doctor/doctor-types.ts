/** What one doctor check reports. */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckOutcome {
  status: CheckStatus;
  /** What was found, for people (one line). */
  detail: string;
  /** On failure: what to do about it. */
  fix?: string;
  /** The failure is "could not reach something" (exit 4) rather than "reached it and it said no" (exit 1). */
  unreachable?: boolean;
}

export interface CheckLine extends CheckOutcome {
  name: string;
  ms: number;
}

/** A failed check, thrown by a check body and turned into its line by the runner. */
export class CheckFailure extends Error {
  constructor(
    message: string,
    readonly fix: string,
    readonly unreachable = false,
  ) {
    super(message);
  }
}
