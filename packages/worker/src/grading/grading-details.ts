/**
 * The `grading` block of a result: how the grade was reached, so that a grade of 0 can be understood without
 * re-running anything (docs/grading.md). The verdict itself is the report (grade-instance.ts); this only reads
 * the same status map and says, per listed test, what the parser saw — and, when a listed test is not in the log
 * at all, that its id probably has the wrong format for the parser.
 */
import {
  TEST_NOT_FOUND_HINT,
  type EvalSpec,
  type GradedTest,
  type GradingDetails,
  type IntegrityFinding,
} from '@rollout-fleet/shared';
import { gradingIntegrity } from './grading-integrity.js';
import { keepOutput } from '../episode/output-limit.js';
import { classifyTest, resolveCase } from './resolution.js';
import { untestedView, type TestLogView } from './test-log-view.js';
import type { ParserName } from './types.js';

/** The test-id format each parser produces (docs/grading.md, "Log parsers"). */
export const TEST_ID_FORMATS: Readonly<Record<ParserName, string>> = {
  pytest: '`path/to/test_file.py::TestClass::test_name` (pytest -rA)',
  pytest_options:
    '`path/to/test_file.py::test_name[param]` (pytest -rA; absolute paths in [param] cut to their last component)',
  pytest_v2: '`path/to/test_file.py::TestClass::test_name` (pytest -rA, colours stripped, also `name STATUS` lines)',
  matplotlib: '`path/to/test_file.py::test_name[param]` (pytest -rA)',
  seaborn: '`path/to/test_file.py::TestClass::test_name` (pytest -rA, also `name PASSED` lines)',
  django:
    '`test_name (module.TestClass)`, on Python 3.11+ `test_name (module.TestClass.test_name)` (unittest -v, Django runtests --verbosity 2)',
  sympy: '`test_name` (sympy bin/test)',
};

export interface GradingDetailsInput {
  eval: Pick<EvalSpec, 'FAIL_TO_PASS' | 'PASS_TO_PASS' | 'timeout_s'>;
  view: TestLogView;
  /** The whole eval log (apply step + test output); kept here head + marker + tail past `logLimitBytes`. */
  log: string;
  logLimitBytes: number;
  timedOut: boolean;
  /** Why the tests did not run when the log cannot say (no patch, empty patch, patch not applied, sandbox lost). */
  notRun?: string;
  /** What was put back before the eval and what the grader found; absent when grading never reached a sandbox. */
  integrity?: { restored: readonly string[]; findings: readonly IntegrityFinding[] };
}

const SIMILAR_MAX = 3;

/** The `grading` block of a grade reached without running the tests (no patch, sandbox lost): it says why. */
export function untestedDetails(
  spec: Pick<EvalSpec, 'repo' | 'log_parser' | 'FAIL_TO_PASS' | 'PASS_TO_PASS' | 'timeout_s'>,
  notRun: string,
): GradingDetails {
  return gradingDetails({ eval: spec, view: untestedView(spec), log: '', logLimitBytes: 0, timedOut: false, notRun });
}

export function gradingDetails(input: GradingDetailsInput): GradingDetails {
  const { view } = input;
  const parsedIds = Object.keys(view.statuses);
  const tests: GradedTest[] = [
    ...input.eval.FAIL_TO_PASS.map((id) => gradedTest(id, 'FAIL_TO_PASS', view, parsedIds)),
    ...input.eval.PASS_TO_PASS.map((id) => gradedTest(id, 'PASS_TO_PASS', view, parsedIds)),
  ];
  const kept = keepOutput(input.log, input.logLimitBytes);
  return {
    parser: view.parser,
    parser_source: view.parserSource,
    tests_ran: view.testsRan,
    timed_out: input.timedOut,
    tests_parsed: parsedIds.length,
    tests,
    problem: problemOf(input, tests, parsedIds.length),
    log: kept.output,
    log_bytes: kept.output_bytes,
    log_truncated: kept.truncated,
    ...(input.integrity !== undefined || view.rejection !== undefined
      ? { integrity: gradingIntegrity({ ...input.integrity, rejection: view.rejection }) }
      : {}),
  };
}

function gradedTest(id: string, list: GradedTest['list'], view: TestLogView, parsedIds: readonly string[]): GradedTest {
  const key = resolveCase(id, view.statuses);
  const status = key === undefined ? null : (view.statuses[key] ?? null);
  const outcome = classifyTest(id, view.statuses, { mode: view.mode, list });
  if (status !== null || !view.testsRan) return { id, list, status, outcome };
  const similar = similarIds(id, parsedIds);
  return {
    id,
    list,
    status,
    outcome,
    hint: `${TEST_NOT_FOUND_HINT} (${view.parser} ids look like ${TEST_ID_FORMATS[view.parser]})`,
    ...(similar.length > 0 ? { similar } : {}),
  };
}

function problemOf(input: GradingDetailsInput, tests: readonly GradedTest[], parsed: number): string | null {
  const { view } = input;
  const timeout = input.timedOut ? `the eval ran past its timeout of ${input.eval.timeout_s} s and was stopped; ` : '';
  if (input.notRun !== undefined) return `${input.notRun}: the tests were not run`;
  if (view.rejection === 'suite-not-run') {
    return (
      `${timeout}the ${view.parser} parser found 0 test results and the log shows no sign that a test suite ran (SUITE_NOT_RUN): ` +
      "the suite did not start, or the test command's output is not in the format this parser reads " +
      '— check eval.log_parser and eval.test_command (docs/grading.md)'
    );
  }
  if (view.rejection === 'exit-code-mismatch') {
    return `${timeout}the test command exited non-zero while the log reports no failing test: the log does not describe the run (TEST_EXIT_CODE_MISMATCH)`;
  }
  if (!view.testsRan) {
    if (input.timedOut) {
      return `the eval ran past its timeout of ${input.eval.timeout_s} s and was stopped before its test output was complete (no end-of-test-output marker): no test was read`;
    }
    return "the eval log has no test output between the harness's markers: the eval script stopped before the tests ran (see the log)";
  }
  if (parsed === 0) {
    return (
      `${timeout}the ${view.parser} parser found 0 test results in the eval log: the test command's output is not in the format this parser reads ` +
      '— check eval.log_parser and eval.test_command (docs/grading.md)'
    );
  }
  const missing = tests.filter((test) => test.status === null).length;
  if (missing > 0) {
    return (
      `${timeout}${missing} of ${tests.length} listed tests are not in the test log (${parsed} test results parsed by ${view.parser}) ` +
      '— check the id format for this parser (docs/grading.md)'
    );
  }
  return input.timedOut ? `the eval ran past its timeout of ${input.eval.timeout_s} s and was stopped` : null;
}

/** The test's own name: `test_x` of `a/b.py::C::test_x[1]`, `test_x (m.C)`, `m.C.test_x`. */
export function testNameOf(id: string): string {
  const bare = id.replace(/\[.*\]$/s, '');
  if (bare.includes(' (')) return bare.slice(0, bare.indexOf(' (')).trim();
  if (bare.includes('::')) return bare.slice(bare.lastIndexOf('::') + 2);
  if (/^[\w.]+$/.test(bare) && bare.includes('.')) return bare.slice(bare.lastIndexOf('.') + 1);
  return bare.trim();
}

/** Parsed ids that contain the listed id's test name as a word: usually the id the episode meant. */
function similarIds(id: string, parsedIds: readonly string[]): string[] {
  const name = testNameOf(id);
  if (name === '') return [];
  const word = new RegExp(`(?:^|[^A-Za-z0-9_])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:[^A-Za-z0-9_]|$)`);
  return parsedIds
    .filter((parsed) => word.test(parsed))
    .sort()
    .slice(0, SIMILAR_MAX);
}
