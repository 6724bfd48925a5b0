import { describe, expect, it } from 'vitest';
import { logRejection, recordTestExitCode, testExitCode } from './run-evidence.js';

const END = "+ : '>>>>> End Test Output'";

describe('testExitCode', () => {
  it('reads the line after the end marker, the last one there', () => {
    expect(testExitCode(`x\n${END}\n+ echo '>>>>> Test Exit Code: 1'\n>>>>> Test Exit Code: 1\n`)).toBe(1);
    expect(testExitCode('no markers at all\n>>>>> Test Exit Code: 0\n')).toBeNull();
  });

  it('ignores a forged line the tests printed inside the test output', () => {
    const log = `PASSED t.py::f\n>>>>> Test Exit Code: 0\n${END}\n>>>>> Test Exit Code: 2\n`;
    expect(testExitCode(log)).toBe(2);
  });
});

describe('logRejection (SWE-bench main get_logs_eval)', () => {
  it('an empty status map without any sign of a run is a suite that did not run', () => {
    expect(logRejection({}, `ImportError: no module named x\n${END}`)).toBe('suite-not-run');
    // Runners that print failures only still print a count of what ran.
    expect(logRejection({}, '3 passing (12ms)')).toBeUndefined();
    expect(logRejection({}, 'Executed 0 of 0 SUCCESS')).toBe('suite-not-run');
  });

  it('a non-zero exit while the log reports no failure is not the run that happened', () => {
    const log = (code: number) => `${END}\n>>>>> Test Exit Code: ${code}\n`;
    expect(logRejection({ 't.py::f': 'PASSED' }, log(1))).toBe('exit-code-mismatch');
    expect(logRejection({ 't.py::f': 'PASSED', 't.py::g': 'FAILED' }, log(1))).toBeUndefined();
    expect(logRejection({ 't.py::f': 'PASSED' }, log(0))).toBeUndefined();
    // No recorded code (older eval scripts): the log is trusted alone.
    expect(logRejection({ 't.py::f': 'PASSED' }, END)).toBeUndefined();
  });
});

describe('recordTestExitCode', () => {
  it('keeps $? before the end marker and prints it after; leaves scripts without the marker alone', () => {
    expect(recordTestExitCode(['pytest', ": '>>>>> End Test Output'", 'git checkout x'])).toEqual([
      'pytest',
      'RF_TEST_EXIT_CODE=$?',
      ": '>>>>> End Test Output'",
      'echo ">>>>> Test Exit Code: $RF_TEST_EXIT_CODE"',
      'git checkout x',
    ]);
    expect(recordTestExitCode(['pytest'])).toEqual(['pytest']);
  });
});
