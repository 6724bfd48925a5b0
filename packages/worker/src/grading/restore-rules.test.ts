import { describe, expect, it } from 'vitest';
import { patchPaths, planRestore, testSideReason, unquoteGitPath } from './restore-rules.js';

const reason = (path: string, testPatch: string[] = ['tests/test_calc.py']) => testSideReason(path, new Set(testPatch));

describe('testSideReason: what is put back before the eval', () => {
  it.each([
    ['tests/test_calc.py', 'test-patch'],
    // A package beside the file the test patch resets is what `import tests.test_calc` finds first.
    ['tests/test_calc/__init__.py', 'shadows-test-patch'],
    ['tests/test_calc.cpython-311-x86_64-linux-gnu.so', 'shadows-test-patch'],
    ['tests/__pycache__/test_calc.cpython-311.pyc', 'bytecode'],
    ['pyutils/__pycache__/calc.cpython-311.pyc', 'bytecode'],
    ['tests/__init__.py', 'test-directory'],
    ['astropy/modeling/tests/test_models.py', 'test-directory'],
    ['sympy/testing/runtests.py', 'test-directory'],
    ['django/test/runner.py', 'test-directory'],
    ['bin/test', 'test-directory'],
    ['tests', 'test-directory'],
    ['conftest.py', 'conftest'],
    ['lib/matplotlib/conftest.py', 'conftest'],
    ['pytest.ini', 'runner-config'],
    ['astropy/modeling/pytest.ini', 'runner-config'],
    ['tox.ini', 'runner-config'],
    ['setup.cfg', 'runner-sections'],
    ['pyproject.toml', 'runner-sections'],
    ['unittest/__init__.py', 'shadows-stdlib-or-runner'],
    ['unittest.py', 'shadows-stdlib-or-runner'],
    ['argparse.py', 'shadows-stdlib-or-runner'],
    ['_pytest/__init__.py', 'shadows-stdlib-or-runner'],
    ['pytest.py', 'shadows-stdlib-or-runner'],
    ['pluggy/__init__.py', 'shadows-stdlib-or-runner'],
    ['sitecustomize.py', 'startup-hook'],
    ['src/usercustomize.py', 'startup-hook'],
    ['sitecustomize/__init__.py', 'startup-hook'],
    ['evil.pth', 'startup-hook'],
    ['lib/python3.11/site-packages/evil.pth', 'startup-hook'],
  ])('%s → %s', (path, expected) => {
    expect(reason(path)).toBe(expected);
  });

  // Real SWE-bench Lite gold patches and other source that merely contains "test" or a runner's name.
  it.each([
    'src/_pytest/assertion/rewrite.py',
    'src/_pytest/skipping.py',
    'src/pytest/__init__.py',
    'sympy/utilities/randtest.py',
    'sympy/core/basic.py',
    'django/db/models/query.py',
    'django/contrib/admin/testsuite.py',
    'lib/matplotlib/testing_helpers.py',
    'pyutils/__init__.py',
    'pyutils/unittest_compat.py',
    'astropy/io/fits/tests.txt',
    'latest/notes.rst',
    'setup.py',
    'requirements/tests.txt',
    'doc/conf.py',
  ])('%s is the fix’s own business', (path) => {
    expect(reason(path)).toBeUndefined();
  });

  it('a package beside a root-level test module (requests: test_requests.py) shadows it', () => {
    expect(reason('test_requests/__init__.py', ['test_requests.py'])).toBe('shadows-test-patch');
    expect(reason('test_requests_helpers.py', ['test_requests.py'])).toBeUndefined();
  });
});

describe('planRestore', () => {
  it('puts back the test side, keeps the fix, sections only for setup.cfg, and reports the shadows', () => {
    const plan = planRestore({
      testPatchPaths: ['tests/test_calc.py', 'tests/test_new.py'],
      changedPaths: [
        'pyutils/calc.py',
        'pyutils/__init__.py',
        'setup.cfg',
        'tests/__init__.py',
        'tests/test_calc/__init__.py',
        'unittest/__init__.py',
        'conftest.py',
      ],
    });
    expect(plan.files.map((e) => e.path)).toEqual([
      'conftest.py',
      'tests/__init__.py',
      'tests/test_calc/__init__.py',
      'unittest/__init__.py',
    ]);
    expect(plan.sections).toEqual([{ path: 'setup.cfg', reason: 'runner-sections' }]);
    expect(plan.findings.map((f) => [f.code, f.severity])).toEqual([
      ['TEST_FILE_SHADOWED', 'violated'],
      ['RUNNER_SHADOWED', 'violated'],
    ]);
  });

  it('a plain fix plans nothing (the untouched test file is the eval script’s to reset)', () => {
    const plan = planRestore({ testPatchPaths: ['tests/test_calc.py'], changedPaths: ['pyutils/calc.py'] });
    expect(plan.files).toEqual([]);
    expect(plan.sections).toEqual([]);
    expect(plan.findings).toEqual([]);
  });
});

describe('patchPaths', () => {
  it('reads both sides, renames and git-quoted odd names', () => {
    const patch = [
      'diff --git a/tests/test_a.py b/tests/test_a.py',
      'new file mode 100644',
      'diff --git a/old name.py b/new name.py',
      'similarity index 100%',
      'rename from old name.py',
      'rename to new name.py',
      'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"',
      '',
    ].join('\n');
    expect(patchPaths(patch)).toEqual(['new name.py', 'old name.py', 'tests/test_a.py', 'tést.py']);
  });

  it('unquotes git paths', () => {
    expect(unquoteGitPath('a\\tb\\"c\\\\')).toBe('a\tb"c\\');
  });
});
