import { describe, expect, it } from 'vitest';
import type { GradingDetails } from '@rollout-fleet/shared';
import { formatGradingLog, formatStepLog, stepProgress } from './job-progress.js';

describe('job progress and step log lines', () => {
  it('gives Bull Board a percentage and a step i/N label', () => {
    expect(stepProgress(3, 12)).toEqual({ progress: 25, step: 3, total: 12, label: 'step 3/12' });
    expect(stepProgress(1, 3).progress).toBe(33.3);
    expect(stepProgress(0, 0)).toEqual({ progress: 100, step: 0, total: 0, label: 'step 0/0' });
    expect(stepProgress(9, 4).step).toBe(4);
  });

  it('writes one line per step with tool, exit code and duration', () => {
    const base = { index: 2, tool: 'bash', exit_code: 0, duration_ms: 1240, timed_out: false };
    expect(formatStepLog(base, 12)).toBe('step 3/12 bash exit=0 1.24s');
    expect(formatStepLog({ ...base, exit_code: null, timed_out: true, duration_ms: 120_000 }, 12)).toBe(
      'step 3/12 bash exit=- 120s timeout',
    );
    expect(
      formatStepLog(
        {
          ...base,
          tool: 'str_replace_editor',
          exit_code: 1,
          duration_ms: 15_500,
          error: { code: 'BAD_ARGS', message: 'x' },
          truncated: true,
        },
        12,
      ),
    ).toBe('step 3/12 str_replace_editor exit=1 15.5s error=BAD_ARGS output-truncated');
  });
});

describe('the grade in the job log', () => {
  const base: GradingDetails = {
    parser: 'django',
    parser_source: 'episode',
    tests_ran: true,
    timed_out: false,
    tests_parsed: 7,
    problem: null,
    log: '',
    log_bytes: 0,
    log_truncated: false,
    tests: [
      { id: 'test_add (t.C.test_add)', list: 'FAIL_TO_PASS', status: 'PASSED', outcome: 'success' },
      { id: 'test_mul (t.B.test_mul)', list: 'PASS_TO_PASS', status: 'PASSED', outcome: 'success' },
      { id: 'test_neg (t.B.test_neg)', list: 'PASS_TO_PASS', status: 'FAILED', outcome: 'failure' },
    ],
  };

  it('is one line when nothing needs a look', () => {
    expect(formatGradingLog(base, false)).toBe(
      'graded parser=django (episode) tests-parsed=7 FAIL_TO_PASS 1/1 PASS_TO_PASS 1/2 unresolved',
    );
  });

  it('warns with the problem and lists the first tests that were not found, with what the log has instead', () => {
    const missing = Array.from({ length: 7 }, (_, i) => ({
      id: `t.py::test_${i}`,
      list: 'PASS_TO_PASS' as const,
      status: null,
      outcome: 'failure' as const,
      hint: 'not found in the test log — check the id format for this parser',
      ...(i === 0 ? { similar: ['test_0 (t.C.test_0)'] } : {}),
    }));
    const details: GradingDetails = {
      ...base,
      tests_parsed: 0,
      problem: 'the django parser found 0 test results in the eval log',
      tests: missing,
    };
    expect(formatGradingLog(details, false).split('\n')).toEqual([
      'graded parser=django (episode) tests-parsed=0 FAIL_TO_PASS 0/0 PASS_TO_PASS 0/7 unresolved',
      'WARNING: the django parser found 0 test results in the eval log',
      '  not found: t.py::test_0 (log has: test_0 (t.C.test_0))',
      '  not found: t.py::test_1',
      '  not found: t.py::test_2',
      '  not found: t.py::test_3',
      '  not found: t.py::test_4',
      "  … and 2 more (the result's grading.tests lists them all)",
    ]);
  });
});
