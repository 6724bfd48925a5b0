import { GradingDetailsSchema, TEST_NOT_FOUND_HINT } from '@rollout-fleet/shared';
import { describe, expect, it } from 'vitest';
import { gradeInstance } from './grade-instance.js';
import { gradingDetails, testNameOf, untestedDetails } from './grading-details.js';
import { END_TEST_OUTPUT, START_TEST_OUTPUT } from './log-markers.js';

const wrap = (lines: string[]): string =>
  [`+ : '${START_TEST_OUTPUT}'`, ...lines, `+ : '${END_TEST_OUTPUT}'`].join('\n');

/**
 * `python3 -m unittest -v` on Python 3.11: `name (module.Class.name) ... ok`, failures repeated as `FAIL: …`. SWE-bench's
 * django parser reads four results from it: the three `...` lines and `test_add` alone from the `FAIL:` line.
 */
const UNITTEST_LOG = wrap([
  'test_add (tests.test_basic.TestCalcAdd.test_add) ... FAIL',
  'test_mul (tests.test_basic.TestBasic.test_mul) ... ok',
  'test_slug_spaces (tests.test_basic.TestBasic.test_slug_spaces) ... ok',
  '',
  '======================================================================',
  'FAIL: test_add (tests.test_basic.TestCalcAdd.test_add)',
  '----------------------------------------------------------------------',
  'AssertionError: -1 != 5',
  '',
  'Ran 3 tests in 0.001s',
  'FAILED (failures=1)',
]);

function details(
  evalSpec: { repo?: string; log_parser?: 'pytest' | 'django'; FAIL_TO_PASS: string[]; PASS_TO_PASS: string[] },
  log: string,
  limit = 64 * 1024,
) {
  const spec = { repo: evalSpec.repo ?? 'example/pyutils', timeout_s: 120, ...evalSpec };
  const grade = gradeInstance({
    instanceId: 'pyutils__calc-add',
    log,
    eval: spec,
    patch: 'diff --git a/x b/x\n',
    patchApplied: true,
  });
  return {
    grade,
    details: GradingDetailsSchema.parse(
      gradingDetails({ eval: spec, view: grade.view, log, logLimitBytes: limit, timedOut: false }),
    ),
  };
}

describe('the grading block of a result', () => {
  it('gives each listed test the status the parser read, and no problem when all were found', () => {
    const { grade, details: d } = details(
      {
        log_parser: 'django',
        FAIL_TO_PASS: ['test_add (tests.test_basic.TestCalcAdd.test_add)'],
        PASS_TO_PASS: ['test_mul (tests.test_basic.TestBasic.test_mul)'],
      },
      UNITTEST_LOG,
    );
    expect(grade.report.resolved).toBe(false);
    expect(d).toMatchObject({
      parser: 'django',
      parser_source: 'episode',
      tests_ran: true,
      timed_out: false,
      tests_parsed: 4,
      problem: null,
    });
    expect(d.tests).toEqual([
      {
        id: 'test_add (tests.test_basic.TestCalcAdd.test_add)',
        list: 'FAIL_TO_PASS',
        status: 'FAILED',
        outcome: 'failure',
      },
      {
        id: 'test_mul (tests.test_basic.TestBasic.test_mul)',
        list: 'PASS_TO_PASS',
        status: 'PASSED',
        outcome: 'success',
      },
    ]);
    expect(d.log).toBe(UNITTEST_LOG);
    expect(d.log_bytes).toBe(Buffer.byteLength(UNITTEST_LOG));
    expect(d.log_truncated).toBe(false);
  });

  it('says so when listed ids are not in the log at all (pytest ids against unittest output), naming the ids the log has', () => {
    const { grade, details: d } = details(
      {
        log_parser: 'django',
        FAIL_TO_PASS: ['tests/test_basic.py::TestCalcAdd::test_add'],
        PASS_TO_PASS: ['tests/test_basic.py::TestBasic::test_mul'],
      },
      UNITTEST_LOG,
    );
    expect(grade.report.tests_status?.PASS_TO_PASS.failure).toEqual(['tests/test_basic.py::TestBasic::test_mul']);
    expect(d.tests_parsed).toBe(4);
    expect(d.problem).toBe(
      '2 of 2 listed tests are not in the test log (4 test results parsed by django) — check the id format for this parser (docs/grading.md)',
    );
    const [f2p, p2p] = d.tests;
    expect(f2p).toMatchObject({
      status: null,
      outcome: 'failure',
      similar: ['test_add', 'test_add (tests.test_basic.TestCalcAdd.test_add)'],
    });
    expect(f2p?.hint?.startsWith(`${TEST_NOT_FOUND_HINT} (django ids look like \`test_name (module.TestClass)\``)).toBe(
      true,
    );
    expect(p2p).toMatchObject({ status: null, similar: ['test_mul (tests.test_basic.TestBasic.test_mul)'] });
  });

  it('makes zero parsed tests the problem when the parser does not fit the log (passing unittest output, default pytest parser)', () => {
    const passing = wrap([
      'test_add (tests.test_basic.TestCalcAdd.test_add) ... ok',
      '',
      'Ran 1 test in 0.001s',
      '',
      'OK',
    ]);
    const { details: d } = details(
      { FAIL_TO_PASS: ['test_add (tests.test_basic.TestCalcAdd.test_add)'], PASS_TO_PASS: [] },
      passing,
    );
    // SWE-bench 5.x: no parsed result and no sign of a run is a suite that did not run, never a pass.
    expect(d).toMatchObject({ parser: 'pytest', parser_source: 'repository', tests_ran: true, tests_parsed: 0 });
    expect(d.tests[0]?.hint).toContain(TEST_NOT_FOUND_HINT);
    expect(d.problem).toMatch(/^the pytest parser found 0 test results .*\(SUITE_NOT_RUN\)/);
    expect(d.problem).toContain('check eval.log_parser and eval.test_command');
    expect(d.integrity?.findings.map((f) => f.code)).toEqual(['SUITE_NOT_RUN']);
  });

  it('shows what the pytest parser makes of failing unittest output: one bogus result, every listed test not found', () => {
    // `FAILED (failures=1)` starts with a status word: SWE-bench's pytest parser stores "(failures=1)" as a test.
    const { details: d } = details(
      { FAIL_TO_PASS: ['test_add (tests.test_basic.TestCalcAdd.test_add)'], PASS_TO_PASS: [] },
      UNITTEST_LOG,
    );
    expect(d.tests_parsed).toBe(1);
    expect(d.problem).toMatch(/^1 of 1 listed tests are not in the test log \(1 test results parsed by pytest\)/);
  });

  it('counts a skipped PASS_TO_PASS test and XFAIL as success, as the resolved rule does', () => {
    const { grade, details: d } = details(
      { log_parser: 'pytest', FAIL_TO_PASS: ['t.py::f'], PASS_TO_PASS: ['t.py::s', 't.py::x'] },
      wrap(['PASSED t.py::f', 'SKIPPED t.py::s', 'XFAIL t.py::x']),
    );
    expect(grade.report.resolved).toBe(true);
    expect(d.tests.map((test) => [test.status, test.outcome])).toEqual([
      ['PASSED', 'success'],
      ['SKIPPED', 'success'],
      ['XFAIL', 'success'],
    ]);
    expect(d.problem).toBeNull();
  });

  it('keeps a long log as head + marker + tail (the step output limiter), the summary at its end intact', () => {
    const noise = Array.from({ length: 2000 }, (_, i) => `collecting line ${i} ${'x'.repeat(40)}`);
    const log = wrap([...noise, 'PASSED t.py::f']);
    const { details: d } = details({ log_parser: 'pytest', FAIL_TO_PASS: ['t.py::f'], PASS_TO_PASS: [] }, log, 4096);
    expect(d.log_truncated).toBe(true);
    expect(d.log_bytes).toBe(Buffer.byteLength(log));
    expect(Buffer.byteLength(d.log)).toBeLessThan(4096 + 200);
    expect(d.log.startsWith(`+ : '${START_TEST_OUTPUT}'`)).toBe(true);
    expect(d.log.endsWith(`PASSED t.py::f\n+ : '${END_TEST_OUTPUT}'`)).toBe(true);
    expect(d.log).toMatch(/bytes omitted|omitted/);
    expect(d.tests[0]?.status).toBe('PASSED');
  });

  it('says why the tests did not run: no test output between the markers, or no patch at all', () => {
    const { details: d } = details(
      { log_parser: 'pytest', FAIL_TO_PASS: ['t.py::f'], PASS_TO_PASS: [] },
      'bash: pytest: command not found\n',
    );
    expect(d).toMatchObject({ tests_ran: false, tests_parsed: 0 });
    expect(d.problem).toMatch(/no test output between the harness's markers/);
    expect(d.tests[0]).toEqual({ id: 't.py::f', list: 'FAIL_TO_PASS', status: null, outcome: 'failure' });

    const none = untestedDetails(
      { repo: 'django/django', FAIL_TO_PASS: ['a'], PASS_TO_PASS: ['b'], timeout_s: 60 },
      'no patch',
    );
    expect(none).toMatchObject({
      parser: 'django',
      parser_source: 'repository',
      tests_ran: false,
      tests_parsed: 0,
      problem: 'no patch: the tests were not run',
      log: '',
    });
    expect(none.tests.every((test) => test.hint === undefined)).toBe(true);
  });
});

describe('a timed-out eval', () => {
  it('says the eval was stopped: before the end marker nothing is read; after it, what was read is graded', () => {
    const spec = {
      repo: 'example/pyutils',
      log_parser: 'pytest' as const,
      FAIL_TO_PASS: ['t.py::f'],
      PASS_TO_PASS: [],
      timeout_s: 30,
    };
    const cut = `+ : '${START_TEST_OUTPUT}'\nPASSED t.py::f\n\nTimeout error: 30 seconds exceeded.`;
    const stopped = gradeInstance({
      instanceId: 'i',
      log: cut,
      eval: spec,
      patch: 'diff --git a/x b/x\n',
      patchApplied: true,
    });
    expect(stopped.report.patch_successfully_applied).toBe(false);
    const early = gradingDetails({ eval: spec, view: stopped.view, log: cut, logLimitBytes: 1024, timedOut: true });
    expect(early).toMatchObject({ tests_ran: false, timed_out: true, tests_parsed: 0 });
    expect(early.problem).toBe(
      'the eval ran past its timeout of 30 s and was stopped before its test output was complete (no end-of-test-output marker): no test was read',
    );

    const whole = wrap(['PASSED t.py::f']) + '\n\nTimeout error: 30 seconds exceeded.';
    const late = gradeInstance({
      instanceId: 'i',
      log: whole,
      eval: spec,
      patch: 'diff --git a/x b/x\n',
      patchApplied: true,
    });
    const details = gradingDetails({ eval: spec, view: late.view, log: whole, logLimitBytes: 1024, timedOut: true });
    expect(late.report.resolved).toBe(true);
    expect(details.problem).toBe('the eval ran past its timeout of 30 s and was stopped');
  });
});

describe('testNameOf', () => {
  it.each([
    ['tests/test_basic.py::TestCalcAdd::test_add', 'test_add'],
    ['tests/test_basic.py::test_param[1-/tmp/x]', 'test_param'],
    ['test_add (tests.test_basic.TestCalcAdd.test_add)', 'test_add'],
    ['test_add (tests.test_basic.TestCalcAdd)', 'test_add'],
    ['tests.test_basic.TestCalcAdd.test_add', 'test_add'],
    ['test_sympify_keywords', 'test_sympify_keywords'],
  ])('%s → %s', (id, name) => {
    expect(testNameOf(id)).toBe(name);
  });
});
