import { describe, expect, it } from 'vitest';
import { classifyTest, resolveCase } from './resolution.js';
import type { StatusMap } from './types.js';

const pf = { mode: 'pass_and_fail', list: 'FAIL_TO_PASS' } as const;
const pp = { mode: 'pass_and_fail', list: 'PASS_TO_PASS' } as const;

describe('classifyTest (SWE-bench main test_passed / test_maintained / test_failed)', () => {
  it.each([
    ['PASSED', 'success', 'success'],
    ['XFAIL', 'success', 'success'],
    ['FAILED', 'failure', 'failure'],
    ['ERROR', 'failure', 'failure'],
    // A skipped FAIL_TO_PASS test resolved nothing; a skipped PASS_TO_PASS test broke nothing.
    ['SKIPPED', 'failure', 'success'],
  ] as const)('%s → FAIL_TO_PASS %s, PASS_TO_PASS %s', (status, f2p, p2p) => {
    const statuses: StatusMap = { 't.py::a': status };
    expect(classifyTest('t.py::a', statuses, pf)).toBe(f2p);
    expect(classifyTest('t.py::a', statuses, pp)).toBe(p2p);
  });

  it('a test missing from the log fails either list; fail-only repos fail only a present FAILED', () => {
    expect(classifyTest('t.py::a', {}, pf)).toBe('failure');
    expect(classifyTest('t.py::a', {}, pp)).toBe('failure');
    const fo = { mode: 'fail_only', list: 'FAIL_TO_PASS' } as const;
    expect(classifyTest('t.py::a', {}, fo)).toBe('success');
    expect(classifyTest('t.py::a', { 't.py::a': 'FAILED' }, fo)).toBe('failure');
  });
});

describe('resolveCase: truncated parametrized ids (upstream _resolve_case, issue #290)', () => {
  const statuses: StatusMap = {
    'a.py::test_grammar_fail[log(photon cm(2)]': 'PASSED',
    'a.py::test_grammar_fail[log(photon s]': 'XFAIL',
    'a.py::test_mixed[x-1]': 'PASSED',
    'a.py::test_mixed[x-2]': 'FAILED',
  };

  it('matches a cut-off id by prefix when every match agrees on passing', () => {
    expect(resolveCase('a.py::test_grammar_fail[log(photon', statuses)).toBe(
      'a.py::test_grammar_fail[log(photon cm(2)]',
    );
    expect(classifyTest('a.py::test_grammar_fail[log(photon', statuses, pf)).toBe('success');
  });

  it('does not match when the matches disagree, nor a complete id by prefix', () => {
    expect(resolveCase('a.py::test_mixed[x-', statuses)).toBeUndefined();
    expect(classifyTest('a.py::test_mixed[x-', statuses, pf)).toBe('failure');
    expect(resolveCase('a.py::test_mixed', statuses)).toBeUndefined();
    expect(resolveCase('a.py::test_mixed[x]', statuses)).toBeUndefined();
  });
});
