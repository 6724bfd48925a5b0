/** Exit codes shared by every subcommand (documented in the README). */
export const EXIT = {
  OK: 0,
  /** The operation ran and reported failures (e.g. verify step failed, episodes failed). */
  FAILURE: 1,
  /** Bad command line (unknown flag, missing argument). */
  USAGE: 2,
  /** Bad configuration or input file; nothing was done. */
  INVALID_INPUT: 3,
  /** A dependency (Redis, veFaaS, sandbox host) was unreachable. */
  UNAVAILABLE: 4,
  /** Stopped by Ctrl-C (SIGINT), after saying what was done and how to go on (128 + SIGINT, as shells do). */
  INTERRUPTED: 130,
} as const;
