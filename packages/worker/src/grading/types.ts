import { TEST_STATUSES, type EvalSpec } from '@rollout-fleet/shared';

/**
 * SWE-bench `TestStatus` values (v4.1.0 `swebench/harness/constants`), as the result contract lists them. The
 * parsers only ask whether a word is one of them (`some`, `includes`), so the list's order does not matter.
 */
export type TestStatus = (typeof TEST_STATUSES)[number];

export function isTestStatus(value: string): value is TestStatus {
  return (TEST_STATUSES as readonly string[]).includes(value);
}

/** The log parsers of SWE-bench's `MAP_REPO_TO_PARSER` for Python repositories. */
export type ParserName = NonNullable<EvalSpec['log_parser']>;

/** Test name → status; built from a Map so that names such as `constructor` are own keys only. */
export type StatusMap = Record<string, TestStatus>;
