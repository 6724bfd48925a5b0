/**
 * The resolved rule (§6.3; SWE-bench v4.1.0 `grading.get_eval_tests_report`, `get_resolution_status`).
 * PASSED/XFAIL succeed, FAILED/ERROR or a missing test fail, SKIPPED is neither. Fail-only repositories
 * fail a test only when it is present with FAILED.
 */
import type { ResolutionStatus, TestOutcome, TestsStatus } from '@rollout-fleet/shared';
import type { StatusMap } from './types.js';

export type GradingMode = 'pass_and_fail' | 'fail_only';

/** How the rule counts one listed test. */
export function classifyTest(test: string, statuses: StatusMap, mode: GradingMode): 'success' | 'failure' | 'neither' {
  const status = Object.hasOwn(statuses, test) ? statuses[test] : undefined;
  if (mode === 'fail_only') return status === 'FAILED' ? 'failure' : 'success';
  if (status === 'PASSED' || status === 'XFAIL') return 'success';
  if (status === undefined || status === 'FAILED' || status === 'ERROR') return 'failure';
  return 'neither';
}

function outcome(tests: readonly string[], statuses: StatusMap, mode: GradingMode): TestOutcome {
  const result: TestOutcome = { success: [], failure: [] };
  for (const test of tests) {
    const verdict = classifyTest(test, statuses, mode);
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
    FAIL_TO_PASS: outcome(input.failToPass, input.statuses, mode),
    PASS_TO_PASS: outcome(input.passToPass, input.statuses, mode),
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
