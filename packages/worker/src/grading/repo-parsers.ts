/** Which parser and which grading mode a repository gets (SWE-bench v4.1.0 `MAP_REPO_TO_PARSER_PY`, `FAIL_ONLY_REPOS`). */
import type { ParserName } from './types.js';

const PARSER_BY_REPO: Readonly<Record<string, ParserName>> = {
  'astropy/astropy': 'pytest_v2',
  'django/django': 'django',
  'marshmallow-code/marshmallow': 'pytest',
  'matplotlib/matplotlib': 'matplotlib',
  'mwaskom/seaborn': 'seaborn',
  'pallets/flask': 'pytest',
  'psf/requests': 'pytest_options',
  'pvlib/pvlib-python': 'pytest',
  'pydata/xarray': 'pytest',
  'pydicom/pydicom': 'pytest_options',
  'pylint-dev/astroid': 'pytest',
  'pylint-dev/pylint': 'pytest_options',
  'pytest-dev/pytest': 'pytest',
  'pyvista/pyvista': 'pytest',
  'scikit-learn/scikit-learn': 'pytest_v2',
  'sqlfluff/sqlfluff': 'pytest',
  'sphinx-doc/sphinx': 'pytest_v2',
  'sympy/sympy': 'sympy',
};

/** The SWE-bench parser for `owner/name`; repositories SWE-bench does not know get `pytest`. */
export function parserForRepo(repo: string): ParserName {
  return Object.hasOwn(PARSER_BY_REPO, repo) ? (PARSER_BY_REPO[repo] as ParserName) : 'pytest';
}

/** JavaScript repositories whose reporters print only failures: absence from the log is success. */
export const FAIL_ONLY_REPOS: ReadonlySet<string> = new Set([
  'chartjs/Chart.js',
  'processing/p5.js',
  'markedjs/marked',
]);
