/**
 * How SWE-bench runs an instance's tests, keyed by repository *and* version (SWE-bench v4.1.0
 * `harness/constants/python.py`, `MAP_REPO_VERSION_TO_SPECS_PY`, the last release with the table; on main the
 * datasets carry whole eval scripts instead): the test command, the install step re-run before the tests, and
 * the repository's eval commands run right after the first activation (trajectories-and-grading.md §5;
 * eval-script.ts puts each in upstream's place). A dataset record's own `test_cmd` / `eval_script`, or the
 * `--test-command` option, overrides the command.
 */
const PYTEST = 'pytest -rA';
const DJANGO = './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1';
const DJANGO_LOCALE = [
  'export LANG=en_US.UTF-8',
  'export LC_ALL=en_US.UTF-8',
  'export PYTHONIOENCODING=utf8',
  'export LANGUAGE=en_US:en',
];

export interface RepoVersionSpec {
  testCommand: string;
  install?: string;
  evalCommands?: readonly string[];
}

interface SpecGroup extends Partial<RepoVersionSpec> {
  /** Versions the group holds; the repository's first group is also its default for versions it does not list. */
  versions: readonly string[];
}

const versions = (text: string): string[] => text.split(' ');

/** Per repository: groups of versions that share a spec; `testCommand` absent = the repository's default. */
const SPECS: Readonly<Record<string, { testCommand: string; groups: readonly SpecGroup[] }>> = {
  'astropy/astropy': {
    testCommand: PYTEST,
    groups: [
      {
        versions: versions('3.0 3.1 3.2 4.1 4.2 4.3 5.0 5.1 5.2 v5.3'),
        install: 'python -m pip install -e .[test] --verbose',
      },
      {
        versions: versions('0.1 0.2 0.3 0.4 1.1 1.2 1.3'),
        install: 'python -m pip install -e .[test] --verbose',
        testCommand: 'pytest -rA -vv -o console_output_style=classic --tb=no',
      },
    ],
  },
  'django/django': {
    testCommand: DJANGO,
    groups: [
      { versions: versions('4.0 4.1 4.2 5.0 5.1 5.2'), install: 'python -m pip install -e .' },
      {
        versions: versions('1.7 1.8 1.10 1.11 2.0 2.1 2.2'),
        install: 'python setup.py install',
        evalCommands: DJANGO_LOCALE,
      },
      {
        versions: ['1.9'],
        install: 'python setup.py install',
        evalCommands: DJANGO_LOCALE,
        testCommand: './tests/runtests.py --verbosity 2',
      },
      { versions: versions('1.4 1.5 1.6'), install: 'python setup.py install' },
      {
        versions: versions('3.0 3.1 3.2'),
        install: 'python -m pip install -e .',
        evalCommands: [
          "sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen",
          'export LANG=en_US.UTF-8',
          'export LANGUAGE=en_US:en',
          'export LC_ALL=en_US.UTF-8',
        ],
      },
    ],
  },
  'matplotlib/matplotlib': {
    testCommand: PYTEST,
    groups: [
      { versions: versions('3.0 3.1 3.2 3.3 3.4 3.5 3.6 3.7'), install: 'python -m pip install -e .' },
      { versions: versions('3.8 3.9'), install: 'python -m pip install --no-build-isolation -e ".[dev]"' },
      {
        versions: versions('1.0 1.1 1.2 1.3 1.4 1.5 2.0 2.1 2.2'),
        install: 'python setup.py build; python setup.py install',
      },
    ],
  },
  'marshmallow-code/marshmallow': {
    testCommand: PYTEST,
    groups: [{ versions: [], install: "python -m pip install -e '.[dev]'" }],
  },
  'mwaskom/seaborn': {
    testCommand: 'pytest --no-header -rA',
    groups: [
      { versions: versions('0.12 0.13 0.14'), install: 'python -m pip install -e .[dev]' },
      { versions: ['0.11'], install: 'python -m pip install -e .' },
    ],
  },
  'pallets/flask': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'psf/requests': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install .' }] },
  'pvlib/pvlib-python': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .[all]' }] },
  'pydata/xarray': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'pydicom/pydicom': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'pylint-dev/astroid': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'pylint-dev/pylint': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'pytest-dev/pytest': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'pyvista/pyvista': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'scikit-learn/scikit-learn': {
    testCommand: PYTEST,
    groups: [{ versions: [], install: 'python -m pip install -v --no-use-pep517 --no-build-isolation -e .' }],
  },
  'sphinx-doc/sphinx': {
    testCommand: 'tox --current-env -epy39 -v --',
    groups: [{ versions: [], install: 'python -m pip install -e .[test]' }],
  },
  'sqlfluff/sqlfluff': { testCommand: PYTEST, groups: [{ versions: [], install: 'python -m pip install -e .' }] },
  'sympy/sympy': {
    testCommand: "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose",
    groups: [{ versions: [], install: 'python -m pip install -e .' }],
  },
};

/**
 * The spec for `repo` at `version`. A listed version gets its group; a repository's other versions (or no
 * version) get its test command and, when the version is given, its first group's install step; repositories
 * SWE-bench does not know get `pytest -rA` and nothing else.
 */
export function specForRepoVersion(repo: string, version?: string): RepoVersionSpec {
  // Own keys only: a repo named `constructor` or `toString` is just an unknown repo.
  if (!Object.hasOwn(SPECS, repo)) return { testCommand: PYTEST };
  const entry = SPECS[repo]!;
  if (version === undefined) return { testCommand: entry.testCommand };
  const group = entry.groups.find((g) => g.versions.includes(version)) ?? entry.groups[0];
  const spec: RepoVersionSpec = { testCommand: group?.testCommand ?? entry.testCommand };
  if (group?.install !== undefined) spec.install = group.install;
  if (group?.evalCommands !== undefined) spec.evalCommands = group.evalCommands;
  return spec;
}

/** `django/django` → `./tests/runtests.py ...`; every other repo → `pytest -rA` (no version: the repository's default). */
export function testCommandForRepo(repo: string, version?: string): string {
  return specForRepoVersion(repo, version).testCommand;
}
