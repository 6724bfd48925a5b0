import { describe, expect, it } from 'vitest';
import { timeoutNotice } from './log-markers.js';
import { parseLog, readTestLog } from './parse-log.js';
import { parserForRepo } from './repo-parsers.js';

const START = "+ : '>>>>> Start Test Output'";
const END = "+ : '>>>>> End Test Output'";

describe('parseLog (§6.1)', () => {
  it('parses only the text between the first start marker and the following end marker', () => {
    const log = ['PASSED before::x', START, 'PASSED t.py::a', 'FAILED t.py::b - boom', END, 'PASSED after::y'].join(
      '\n',
    );
    expect(parseLog(log, 'pytest')).toEqual({ 't.py::a': 'PASSED', 't.py::b': 'FAILED' });
  });

  it('falls back to the whole log when the marked section yields nothing (output went elsewhere)', () => {
    const log = [START, 'collected 1 item', END, 'PASSED t.py::late'].join('\n');
    expect(readTestLog(log, 'pytest')).toEqual({ applied: true, statuses: { 't.py::late': 'PASSED' } });
  });

  it.each(['>>>>> Patch Apply Failed', '>>>>> Reset Failed', '>>>>> Tests Errored', '>>>>> Tests Timed Out'])(
    'treats a log containing %s as not applied',
    (marker) => {
      const log = [marker, START, 'PASSED t.py::a', END].join('\n');
      expect(readTestLog(log, 'pytest')).toEqual({ applied: false, statuses: {} });
    },
  );

  it('treats a log missing either marker as not applied, e.g. one cut short by the timeout', () => {
    const cut = [START, 'PASSED t.py::a'].join('\n') + timeoutNotice(1800);
    expect(cut.endsWith('\n\nTimeout error: 1800 seconds exceeded.')).toBe(true);
    expect(readTestLog(cut, 'pytest')).toEqual({ applied: false, statuses: {} });
    expect(readTestLog(['PASSED t.py::a', END].join('\n'), 'pytest').applied).toBe(false);
  });
});

describe('parserForRepo', () => {
  it('maps repositories as SWE-bench does and defaults to pytest', () => {
    expect(parserForRepo('django/django')).toBe('django');
    expect(parserForRepo('sympy/sympy')).toBe('sympy');
    expect(parserForRepo('scikit-learn/scikit-learn')).toBe('pytest_v2');
    expect(parserForRepo('sphinx-doc/sphinx')).toBe('pytest_v2');
    expect(parserForRepo('psf/requests')).toBe('pytest_options');
    expect(parserForRepo('matplotlib/matplotlib')).toBe('matplotlib');
    expect(parserForRepo('mwaskom/seaborn')).toBe('seaborn');
    expect(parserForRepo('pydata/xarray')).toBe('pytest');
    expect(parserForRepo('someone/unknown')).toBe('pytest');
    expect(parserForRepo('toString')).toBe('pytest');
  });
});
