import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTestOutput } from './parse-log.js';

// Expected maps were cross-checked against SWE-bench v4.1.0's Python parsers run on the same fixtures; since then
// upstream main (7a21e057) drops `SKIPPED [n] file:line: reason` summary lines, and so do these.
function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

describe('pytest parser (pytest -rA short summary)', () => {
  it('reads status-first lines, strips the FAILED message, drops the `SKIPPED [n] file:line` summary (upstream main)', () => {
    expect(parseTestOutput(fixture('pytest.log'), 'pytest')).toEqual({
      'testing/test_assertrewrite.py::TestAssertionRewrite::test_place_initial_imports': 'PASSED',
      'testing/test_assertrewrite.py::TestAssertionRewrite::test_name': 'PASSED',
      'testing/test_assertrewrite.py::TestAssertionRewrite::test_dont_rewrite': 'PASSED',
      'testing/test_assertrewrite.py::TestAssertionRewrite::test_assert_already_has_message': 'XFAIL',
      'testing/test_assertrewrite.py::TestEarlyRewriteBailout::test_pattern_contains_subdirectories': 'ERROR',
      'testing/test_assertrewrite.py::TestIssue11140::test_constant_not_picked_as_module_docstring': 'FAILED',
    });
  });

  it('lets a later line overwrite an earlier one and ignores lines that are only a status word', () => {
    expect(parseTestOutput('FAILED t.py::a - boom\nPASSED t.py::a\nPASSED\nPASSEDx', 'pytest')).toEqual({
      't.py::a': 'PASSED',
    });
  });

  it('keeps names such as constructor as plain own keys', () => {
    const statuses = parseTestOutput('PASSED constructor\nFAILED __proto__', 'pytest');
    expect(Object.keys(statuses)).toEqual(['constructor', '__proto__']);
    expect(statuses.__proto__).toBe('FAILED');
  });
});

describe('pytest-with-options parser (requests, pylint, pydicom)', () => {
  it('shortens a single-slash absolute option to its last component, leaving // and * options alone', () => {
    expect(parseTestOutput(fixture('pytest-options.log'), 'pytest_options')).toEqual({
      'tests/test_requests.py::test_data_argument_accepts_tuples[data0]': 'PASSED',
      'tests/test_requests.py::TestRequests::test_certificate_path[/ca.pem]': 'PASSED',
      'tests/test_requests.py::TestRequests::test_url_pattern[//example.com/a/b]': 'PASSED',
      'tests/test_requests.py::TestRequests::test_glob[/data/*.pem]': 'PASSED',
      'tests/test_requests.py::TestRequests::test_proxy_env[/cert.pem]': 'FAILED',
    });
  });
});

describe('pytest v2 parser (astropy, scikit-learn, sphinx)', () => {
  it('removes colour codes and control characters and also reads name-first lines', () => {
    const log = fixture('pytest-v2.log');
    expect(log).toContain('\x1b[32mPASSED\x1b[0m');
    expect(parseTestOutput(log, 'pytest_v2')).toEqual({
      'sklearn/utils/tests/test_pprint.py::test_basic': 'PASSED',
      'sklearn/utils/tests/test_pprint.py::test_deeply_nested': 'PASSED',
      'sklearn/utils/tests/test_pprint.py::test_gridsearch': 'PASSED',
      'sklearn/utils/tests/test_pprint.py::test_changed_only': 'FAILED',
      'sklearn/utils/tests/test_pprint.py::test_length_constraint': 'FAILED',
      'sklearn/utils/tests/test_pprint.py::test_builtin_prettyprinter': 'PASSED',
      'sklearn/utils/tests/test_pprint.py::test_gridsearch_pipeline': 'XFAIL',
    });
  });

  it('deletes a tab rather than treating it as a separator, as the harness does', () => {
    expect(parseTestOutput('t.py::a\tPASSED\nt.py::b PASSED', 'pytest_v2')).toEqual({ 't.py::b': 'PASSED' });
  });
});

describe('matplotlib parser', () => {
  it('writes MouseButton.LEFT / RIGHT as 1 / 3 before parsing', () => {
    expect(parseTestOutput(fixture('matplotlib.log'), 'matplotlib')).toEqual({
      'lib/matplotlib/tests/test_widgets.py::test_rectangle_selector[kwargs0]': 'PASSED',
      'lib/matplotlib/tests/test_widgets.py::test_span_selector_press[1-True]': 'PASSED',
      'lib/matplotlib/tests/test_widgets.py::test_span_selector_press[3-False]': 'PASSED',
      'lib/matplotlib/tests/test_widgets.py::test_lasso_selector_set_props': 'FAILED',
    });
  });
});

describe('seaborn parser', () => {
  it('reads FAILED/PASSED summary lines and verbose `name PASSED` lines, nothing else', () => {
    expect(parseTestOutput(fixture('seaborn.log'), 'seaborn')).toEqual({
      'tests/_core/test_plot.py::TestInit::test_empty': 'PASSED',
      'tests/_core/test_plot.py::TestInit::test_data_only': 'PASSED',
      'tests/_core/test_plot.py::TestLegend::test_single_layer_common_variable': 'PASSED',
      'tests/_core/test_plot.py::TestScaling::test_inference_from_layer_data': 'FAILED',
    });
  });
});

describe('django parser (runtests.py --verbosity 2)', () => {
  it('reads ... ok / FAIL / ERROR / skipped lines, FAIL:/ERROR: headers and ok after extra output', () => {
    expect(parseTestOutput(fixture('django.log'), 'django')).toEqual({
      'test_simple_sitemap_custom_index_warning (sitemaps_tests.test_http.DeprecatedTests)': 'PASSED',
      'A simple sitemap can be rendered': 'PASSED',
      'test_callable_sitemod_no_items (sitemaps_tests.test_http.HTTPSitemapTests)': 'PASSED',
      'test_empty_page (sitemaps_tests.test_http.HTTPSitemapTests)': 'FAILED',
      'test_no_section (sitemaps_tests.test_http.HTTPSitemapTests)': 'ERROR',
      'test_localized_priority (sitemaps_tests.test_http.HTTPSitemapTests)': 'SKIPPED',
      'test_requestsite_sitemap (sitemaps_tests.test_http.HTTPSitemapTests)': 'PASSED',
      // The line-wise rule credits the wrong line; the multi-line pattern below adds the right name.
      'Running checks': 'PASSED',
      'test_sitemap_without_entries (sitemaps_tests.test_http.HTTPSitemapTests)': 'PASSED',
      'test_x_robots_sitemap (sitemaps_tests.test_http.HTTPSitemapTests)': 'PASSED',
      'test_page_not_int (sitemaps_tests.test_http.HTTPSitemapTests)': 'PASSED',
      // `FAIL: name (module.Class)` keeps only the first token, as the harness does.
      test_no_section: 'ERROR',
      test_empty_page: 'FAILED',
    });
  });

  it('applies each of the three multi-line patterns even when an inner line resets the remembered test', () => {
    const log = [
      "test_a (m.T) ... Testing against Django installed in '/testbed/django'",
      'Importing x ... done',
      'System check identified no issues (0 silenced).',
      'ok',
      'test_b (m.T) ... Internal Server Error: /admin/x/',
      'ok',
      'test_c (m.T) ... System check identified no issues (0 silenced)',
      'ok',
    ].join('\n');
    const statuses = parseTestOutput(log, 'django');
    expect(statuses['test_a (m.T)']).toBe('PASSED');
    expect(statuses['test_b (m.T)']).toBe('PASSED');
    expect(statuses['test_c (m.T)']).toBe('PASSED');
    expect(statuses['Importing x']).toBe('PASSED');
  });

  it('reads the  OK variants, --version and the django-7188 migration line', () => {
    const log = [
      'test_x (m.T) ... OK',
      'test_y (m.T) ...  OK',
      'Applying sites.0002_alter_domain_unique...test_no_migrations (m.T) ... ok',
      'test_version (m.T)',
      '--version is equivalent to version ... ok',
    ].join('\n');
    expect(parseTestOutput(log, 'django')).toEqual({
      'test_x (m.T)': 'PASSED',
      'test_y (m.T)': 'PASSED',
      'test_no_migrations (m.T)': 'PASSED',
      '--version is equivalent to version': 'PASSED',
    });
  });
});

describe('sympy parser (bin/test -C --verbose)', () => {
  it('marks failure headers and per-test ok / F / E lines; a trailing [FAIL] hides that line', () => {
    expect(parseTestOutput(fixture('sympy.log'), 'sympy')).toEqual({
      'sympy/matrices/tests/test_sparse.py:test_sparse_matrix': 'FAILED',
      'sympy/matrices/tests/test_sparse.py:test_sparse_solve': 'FAILED',
      test_sparse_matrix: 'FAILED',
      test_transpose: 'PASSED',
      test_trace: 'PASSED',
      test_CL_RL: 'PASSED',
      test_add: 'PASSED',
      test_errors: 'PASSED',
      test_len: 'PASSED',
      test_sparse_zeros_sparse_eye: 'PASSED',
      test_copyin: 'PASSED',
      test_sparse_solve: 'ERROR',
    });
  });
});
