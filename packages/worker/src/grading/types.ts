import type { EvalSpec } from '@rollout-fleet/shared';

/** SWE-bench `TestStatus` values (v4.1.0 `swebench/harness/constants`). */
export type TestStatus = 'PASSED' | 'FAILED' | 'SKIPPED' | 'ERROR' | 'XFAIL';

export const TEST_STATUSES: readonly TestStatus[] = ['FAILED', 'PASSED', 'SKIPPED', 'ERROR', 'XFAIL'];

export function isTestStatus(value: string): value is TestStatus {
  return (TEST_STATUSES as readonly string[]).includes(value);
}

/** The log parsers of SWE-bench's `MAP_REPO_TO_PARSER` for Python repositories. */
export type ParserName = NonNullable<EvalSpec['log_parser']>;

/** Test name → status; built from a Map so that names such as `constructor` are own keys only. */
export type StatusMap = Record<string, TestStatus>;
