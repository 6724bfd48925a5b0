/** Log markers of the SWE-bench harness (v4.1.0 `swebench/harness/constants`); grading keys on these strings. */
export const START_TEST_OUTPUT = '>>>>> Start Test Output';
export const END_TEST_OUTPUT = '>>>>> End Test Output';
export const APPLY_PATCH_PASS = '>>>>> Applied Patch';
export const APPLY_PATCH_FAIL = '>>>>> Patch Apply Failed';
export const RESET_FAILED = '>>>>> Reset Failed';
export const TESTS_ERROR = '>>>>> Tests Errored';
export const TESTS_TIMEOUT = '>>>>> Tests Timed Out';

/** Any of these in a log means the tests did not run on the patched tree (§6.1 step 1). */
export const NOT_APPLIED_MARKERS: readonly string[] = [APPLY_PATCH_FAIL, RESET_FAILED, TESTS_ERROR, TESTS_TIMEOUT];

/** What the harness appends to `test_output.txt` when the eval script exceeds its timeout. */
export function timeoutNotice(timeoutS: number): string {
  return `\n\nTimeout error: ${timeoutS} seconds exceeded.`;
}
