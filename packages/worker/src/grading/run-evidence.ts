/**
 * Whether an eval log describes a test run that happened (SWE-bench main `harness/grading.py` at 7a21e057,
 * `get_logs_eval`; `harness/utils.py` `record_test_exit_code`): a log with no parsed test and no sign that the
 * suite ran is not a pass (under fail-only grading an empty log would resolve every test), and a test command
 * that exited non-zero while the log reports no failure at all is not the run that happened (a patch printing
 * its own PASSED lines). Both grade as "no usable test output", as upstream's `found = False` does.
 */
import { END_TEST_OUTPUT } from './log-markers.js';
import type { StatusMap } from './types.js';

/** The line the eval script prints after the end marker: `>>>>> Test Exit Code: <n>` (upstream's constant). */
export const TEST_EXIT_CODE = '>>>>> Test Exit Code';
/** The shell variable holding the test command's `$?` until it is printed. */
export const TEST_EXIT_CODE_VAR = 'RF_TEST_EXIT_CODE';

/**
 * Evidence that a runner executed, for runners whose parser records failures only (upstream's `SUITE_RAN`, the
 * counts non-zero: a runner that started and lost its browser still prints "Executed 0 of 0").
 */
const SUITE_RAN =
  /Executed [1-9]\d* of \d+|TOTAL: [1-9]\d* (?:SUCCESS|FAILED)|[1-9]\d* passing|Tests:\s+[1-9]\d*|Test Suites:\s+(?:\d+ \w+, )*[1-9]\d* total|^# tests [1-9]\d*|[1-9]\d* specs?, \d+ failures?|': ok$/m;

const EXIT_CODE_RE = new RegExp(`^${TEST_EXIT_CODE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\s*(-?\\d+)\\s*$`, 'gm');

/**
 * The recorded exit status of the test command, or null when absent. Only a line after the last end marker
 * counts, and the last such line: upstream takes the first anywhere, which the tests' own output can forge.
 */
export function testExitCode(log: string): number | null {
  const end = log.lastIndexOf(END_TEST_OUTPUT);
  if (end < 0) return null;
  let code: number | null = null;
  for (const match of log.slice(end).matchAll(EXIT_CODE_RE)) code = Number(match[1]);
  return code;
}

export function suiteRan(log: string): boolean {
  return SUITE_RAN.test(log);
}

/** Why a parsed log does not describe the run; undefined when it does. */
export type LogRejection = 'suite-not-run' | 'exit-code-mismatch';

export function logRejection(statuses: StatusMap, log: string): LogRejection | undefined {
  const values = Object.values(statuses);
  if (values.length === 0) return suiteRan(log) ? undefined : 'suite-not-run';
  const code = testExitCode(log);
  if (code !== null && code !== 0 && !values.some((s) => s === 'FAILED' || s === 'ERROR')) return 'exit-code-mismatch';
  return undefined;
}

/**
 * An eval script's lines with the test command's exit status recorded: `$?` kept right after the test command
 * (the line before the end marker) and printed after the marker, outside the parsed region. A script without
 * the end marker is left as it is (its log is then trusted alone, as upstream does).
 */
export function recordTestExitCode(lines: readonly string[]): string[] {
  const end = lines.findIndex((line) => line.includes(END_TEST_OUTPUT));
  if (end < 0) return [...lines];
  return [
    ...lines.slice(0, end),
    `${TEST_EXIT_CODE_VAR}=$?`,
    lines[end] as string,
    `echo "${TEST_EXIT_CODE}: $${TEST_EXIT_CODE_VAR}"`,
    ...lines.slice(end + 1),
  ];
}
