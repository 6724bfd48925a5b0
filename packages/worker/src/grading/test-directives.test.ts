import { describe, expect, it } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { modifiedFiles, testDirectives } from './test-directives.js';

interface Instance {
  instance_id: string;
  repo: string;
  test_patch: string;
}
const DATASET = 'swe-agent/swe-bench-lite-test.json';

function instance(id: string): Instance {
  const found = (JSON.parse(readSharedData(DATASET)) as Instance[]).find((i) => i.instance_id === id);
  if (!found) throw new Error(`fixture instance ${id} missing`);
  return found;
}

describeWith([sharedDataNeed(DATASET)], 'testDirectives on real SWE-bench Lite instances', () => {
  it.each([
    ['django__django-16255', ['sitemaps_tests.test_http', 'sitemaps_tests.urls.http']],
    ['django__django-15781', ['user_commands.tests']],
    ['sympy__sympy-13031', ['sympy/matrices/tests/test_sparse.py']],
    ['pytest-dev__pytest-11143', ['testing/test_assertrewrite.py']],
    ['scikit-learn__scikit-learn-13584', ['sklearn/utils/tests/test_pprint.py']],
  ])('%s → %j', (id, expected) => {
    const { test_patch: testPatch, repo } = instance(id);
    expect(testDirectives(testPatch, repo)).toEqual(expected);
  });

  it('lists the modified test files of the same patches as paths', () => {
    expect(modifiedFiles(instance('django__django-16255').test_patch)).toEqual([
      'tests/sitemaps_tests/test_http.py',
      'tests/sitemaps_tests/urls/http.py',
    ]);
    expect(modifiedFiles(instance('pytest-dev__pytest-11143').test_patch)).toEqual(['testing/test_assertrewrite.py']);
  });
});

const header = (path: string) => `diff --git a/${path} b/${path}\n--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-a\n+b\n`;

describe('testDirectives rules', () => {
  it('drops data files by extension (csv without the dot, as in the harness)', () => {
    const patch = [
      't/test_a.py',
      't/data.json',
      't/img.png',
      't/table.csv',
      't/xcsv',
      't/notes.md',
      't/c.toml',
      't/d.yaml',
      't/conftest.py',
    ]
      .map(header)
      .join('');
    expect(testDirectives(patch, 'o/r')).toEqual(['t/test_a.py', 't/conftest.py']);
  });

  it('converts django paths: strip .py, strip a leading tests/, slashes to dots', () => {
    const patch = ['tests/a/b/tests.py', 'django/test/utils.py', 'tests/x/fixtures/y.json', 'tests/templates/t.html']
      .map(header)
      .join('');
    expect(testDirectives(patch, 'django/django')).toEqual(['a.b.tests', 'django.test.utils', 'templates.t.html']);
  });
});

describe('modifiedFiles', () => {
  it('leaves out new files and keeps deleted ones', () => {
    const patch = [
      'diff --git a/t/new_test.py b/t/new_test.py',
      'new file mode 100644',
      'index 0000000..e69de29',
      '--- /dev/null',
      '+++ b/t/new_test.py',
      '@@ -0,0 +1 @@',
      '+x = 1',
      'diff --git a/t/old.py b/t/old.py',
      'deleted file mode 100644',
      '--- a/t/old.py',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-x = 1',
      '',
    ].join('\n');
    expect(modifiedFiles(patch)).toEqual(['t/old.py']);
  });

  it('does not mistake a removed line starting with "-- " for a file header', () => {
    const patch = [
      'diff --git a/t/q.sql b/t/q.sql',
      '--- a/t/q.sql',
      '+++ b/t/q.sql',
      '@@ -1,2 +1,2 @@',
      '--- old comment',
      '+++ new comment',
      ' select 1;',
      '',
    ].join('\n');
    expect(modifiedFiles(patch)).toEqual(['t/q.sql']);
  });
});
