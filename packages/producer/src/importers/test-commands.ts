/**
 * SWE-bench `test_cmd` per repository (swebench/harness/constants/python.py, trajectories-and-grading.md §5).
 * SWE-bench keys it by repo *and* version; the per-version exceptions are rare, so this table is per repo.
 * A dataset record's own `test_cmd` / `eval_script`, or the `--test-command` option, overrides it.
 */
const TEST_PYTEST = 'pytest -rA';

const TEST_COMMANDS: Readonly<Record<string, string>> = {
  'django/django': './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1',
  'sympy/sympy': "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose",
  'sphinx-doc/sphinx': 'tox --current-env -epy39 -v --',
  'mwaskom/seaborn': 'pytest --no-header -rA',
};

/** `django/django` → `./tests/runtests.py ...`; every other repo → `pytest -rA`. */
export function testCommandForRepo(repo: string): string {
  // Own keys only: a repo named `constructor` or `toString` is just an unknown repo.
  return Object.hasOwn(TEST_COMMANDS, repo) ? TEST_COMMANDS[repo]! : TEST_PYTEST;
}
