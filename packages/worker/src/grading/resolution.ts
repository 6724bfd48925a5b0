/**
 * The resolved rule (§6.3; SWE-bench main `harness/grading.py` at 7a21e057: `test_passed`, `test_maintained`,
 * `test_failed`, `_resolve_case`, `get_eval_tests_report`, `get_resolution_status`; docs/grading.md lists the
 * rules and the commit they follow). PASSED/XFAIL succeed; FAILED/ERROR or a missing test fail; SKIPPED fails a
 * FAIL_TO_PASS test (a skipped test resolved nothing) and keeps a PASS_TO_PASS one (a skip is no regression).
 * Fail-only repositories fail a test only when it is present with FAILED.
 */
import type { ResolutionStatus, TestOutcome, TestsStatus } from '@rollout-fleet/shared';
import type { StatusMap, TestStatus } from './types.js';

export type GradingMode = 'pass_and_fail' | 'fail_only';
export type TestList = 'FAIL_TO_PASS' | 'PASS_TO_PASS';

const PASSING: ReadonlySet<TestStatus> = new Set(['PASSED', 'XFAIL']);

/**
 * The status-map key a listed id stands for. Exact ids match exactly; an id cut off inside its parameters (more
 * `[` than `]`, as 676 SWE-bench Verified ids are, e.g. `test_ogip_grammar_fail[log(photon`) matches the parsed ids
 * it is a prefix of, when they all agree on passing or not (upstream `_resolve_case`).
 */
export function resolveCase(test: string, statuses: StatusMap): string | undefined {
  if (Object.hasOwn(statuses, test)) return test;
  if (count(test, '[') <= count(test, ']')) return undefined;
  const matches = Object.keys(statuses).filter((key) => key.startsWith(test));
  if (matches.length === 0) return undefined;
  const outcomes = new Set(matches.map((key) => PASSING.has(statuses[key] as TestStatus)));
  return outcomes.size === 1 ? matches[0] : undefined;
}

function count(text: string, ch: string): number {
  return text.split(ch).length - 1;
}

/** How the rule counts one listed test. */
export function classifyTest(
  test: string,
  statuses: StatusMap,
  o: { mode: GradingMode; list: TestList },
): 'success' | 'failure' | 'neither' {
  // Fail-only matches exactly, as upstream's `check_fail_only` does.
  if (o.mode === 'fail_only')
    return Object.hasOwn(statuses, test) && statuses[test] === 'FAILED' ? 'failure' : 'success';
  const key = resolveCase(test, statuses);
  const status = key === undefined ? undefined : statuses[key];
  if (status !== undefined && PASSING.has(status)) return 'success';
  if (status === 'SKIPPED') return o.list === 'PASS_TO_PASS' ? 'success' : 'failure';
  if (status === undefined || status === 'FAILED' || status === 'ERROR') return 'failure';
  return 'neither';
}

function outcome(tests: readonly string[], statuses: StatusMap, o: { mode: GradingMode; list: TestList }): TestOutcome {
  const result: TestOutcome = { success: [], failure: [] };
  for (const test of tests) {
    const verdict = classifyTest(test, statuses, o);
    if (verdict !== 'neither') result[verdict].push(test);
  }
  return result;
}

export interface EvaluateTestsInput {
  statuses: StatusMap;
  failToPass: readonly string[];
  passToPass: readonly string[];
  /** @defaultValue 'pass_and_fail' */
  mode?: GradingMode;
}

/** `tests_status` of report.json; FAIL_TO_FAIL and PASS_TO_FAIL are present and empty, as in standard runs. */
export function evaluateTests(input: EvaluateTestsInput): TestsStatus {
  const mode = input.mode ?? 'pass_and_fail';
  return {
    FAIL_TO_PASS: outcome(input.failToPass, input.statuses, { mode, list: 'FAIL_TO_PASS' }),
    PASS_TO_PASS: outcome(input.passToPass, input.statuses, { mode, list: 'PASS_TO_PASS' }),
    FAIL_TO_FAIL: { success: [], failure: [] },
    PASS_TO_FAIL: { success: [], failure: [] },
  };
}

/** success / (success + failure); an empty denominator counts as 1 (nothing to break). */
export function successRate(result: TestOutcome): number {
  const total = result.success.length + result.failure.length;
  return total === 0 ? 1 : result.success.length / total;
}

export function resolutionOf(testsStatus: TestsStatus): ResolutionStatus {
  const f2p = successRate(testsStatus.FAIL_TO_PASS);
  const p2p = successRate(testsStatus.PASS_TO_PASS);
  if (f2p === 1 && p2p === 1) return 'RESOLVED_FULL';
  if (f2p > 0 && f2p < 1 && p2p === 1) return 'RESOLVED_PARTIAL';
  return 'RESOLVED_NO';
}
