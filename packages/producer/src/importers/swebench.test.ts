import { beforeAll, describe, expect, it } from 'vitest';
import { describeWith, itWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { formatProblem } from '../validation/problem.js';
import { evalSpecForInstance, parseSweBenchInstances } from './swebench-dataset.js';
import { importSweBenchGold, importSweBenchPredictions, type SweBenchImportOptions } from './swebench-predictions.js';
import { specForRepoVersion, testCommandForRepo } from './test-commands.js';

const DATASET = 'swe-agent/swe-bench-lite-test.json';
const dataset = () => ({ path: 'swe-bench-lite-test.json', text: readSharedData(DATASET) });
const IDS = [
  'django__django-16255',
  'sympy__sympy-13031',
  'pytest-dev__pytest-11143',
  'scikit-learn__scikit-learn-13584',
  'django__django-15781',
];

function loadDataset(): SweBenchImportOptions {
  const { instances, problems } = parseSweBenchInstances(dataset());
  expect(problems).toEqual([]);
  return {
    runId: 'run-1',
    imageTemplate: 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest',
    instances: new Map(instances.map((i) => [i.instance.instance_id, i.instance])),
  };
}

const predictions = [
  {
    instance_id: 'django__django-16255',
    model_patch: 'diff --git a/django/x.py b/django/x.py\n',
    model_name_or_path: 'gpt4',
  },
  { instance_id: 'sympy__sympy-13031', model_patch: '', model_name_or_path: 'gpt4' },
  { instance_id: 'pytest-dev__pytest-11143', model_patch: null, model_name_or_path: 'gpt4' },
];

describe('SWE-bench dataset', () => {
  itWith(
    [sharedDataNeed(DATASET)],
    'reads the real Lite file with plain lists and builds eval specs with per-repo test commands',
    () => {
      const { instances } = parseSweBenchInstances(dataset());
      expect(instances.map((i) => i.instance.instance_id)).toEqual(IDS);
      const django = instances[0]!.instance;
      expect(django.FAIL_TO_PASS).toHaveLength(1);
      expect(django.PASS_TO_PASS).toHaveLength(36);
      const spec = evalSpecForInstance(django);
      expect(spec).toMatchObject({
        repo: 'django/django',
        base_commit: django.base_commit,
        test_command: './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1',
      });
      expect(spec.test_patch).toContain('diff --git');
      expect(evalSpecForInstance(instances[1]!.instance).test_command).toBe(
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose",
      );
      expect(evalSpecForInstance(instances[2]!.instance).test_command).toBe('pytest -rA');
      expect(testCommandForRepo('sphinx-doc/sphinx')).toBe('tox --current-env -epy39 -v --');
      expect(evalSpecForInstance(django, { testCommand: 'custom' }).test_command).toBe('custom');
    },
  );

  it('keys the test command, install step and eval commands by repository and version (SWE-bench v4.1.0 table)', () => {
    // astropy 0.1–1.3 and django 1.9 have their own test commands.
    expect(specForRepoVersion('astropy/astropy', '1.3').testCommand).toBe(
      'pytest -rA -vv -o console_output_style=classic --tb=no',
    );
    expect(specForRepoVersion('astropy/astropy', '4.3').testCommand).toBe('pytest -rA');
    expect(specForRepoVersion('django/django', '1.9')).toMatchObject({
      testCommand: './tests/runtests.py --verbosity 2',
      install: 'python setup.py install',
    });
    expect(specForRepoVersion('django/django', '3.0')).toMatchObject({
      testCommand: './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1',
      install: 'python -m pip install -e .',
    });
    expect(specForRepoVersion('django/django', '3.0').evalCommands).toContain('export LC_ALL=en_US.UTF-8');
    expect(specForRepoVersion('django/django', '4.2').evalCommands).toBeUndefined();
    expect(specForRepoVersion('sympy/sympy', '1.12').install).toBe('python -m pip install -e .');
    // Without a version: the repository's command, nothing version-specific; unknown repositories: pytest.
    expect(specForRepoVersion('django/django')).toEqual({
      testCommand: './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1',
    });
    expect(specForRepoVersion('toString', '1.0')).toEqual({ testCommand: 'pytest -rA' });
    const instance = {
      instance_id: 'django__django-1',
      repo: 'django/django',
      version: '1.9',
      FAIL_TO_PASS: ['t'],
      PASS_TO_PASS: [],
    };
    expect(evalSpecForInstance(instance)).toMatchObject({
      test_command: './tests/runtests.py --verbosity 2',
      install: 'python setup.py install',
      eval_commands: expect.arrayContaining(['export LANG=en_US.UTF-8']),
    });
  });

  it('accepts JSON-encoded test lists (Hugging Face form), v5 eval_script/image_name, and reports bad ones', () => {
    const rows = [
      {
        instance_id: 'a__b-1',
        repo: 'a/b',
        FAIL_TO_PASS: '["t::x"]',
        PASS_TO_PASS: '[]',
        version: 1.1,
        extra: 'ignored',
      },
      {
        instance_id: 'a__b-2',
        repo: 'a/b',
        FAIL_TO_PASS: [],
        eval_script: '#!/bin/bash\nexit 0\n',
        image_name: 'reg/a_b-2:v5',
      },
      { instance_id: 'a__b-3', repo: 'a/b', FAIL_TO_PASS: 'not json' },
      { repo: 'a/b' },
    ];
    const { instances, problems } = parseSweBenchInstances({
      path: 'ds.jsonl',
      text: rows.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(instances.map((i) => i.instance)).toEqual([
      { instance_id: 'a__b-1', repo: 'a/b', FAIL_TO_PASS: ['t::x'], PASS_TO_PASS: [], version: '1.1' },
      {
        instance_id: 'a__b-2',
        repo: 'a/b',
        FAIL_TO_PASS: [],
        PASS_TO_PASS: [],
        eval_script: '#!/bin/bash\nexit 0\n',
        image_name: 'reg/a_b-2:v5',
      },
    ]);
    expect(evalSpecForInstance(instances[1]!.instance)).toEqual({
      repo: 'a/b',
      FAIL_TO_PASS: [],
      PASS_TO_PASS: [],
      eval_script: '#!/bin/bash\nexit 0\n',
    });
    expect(problems.map(formatProblem)).toEqual([
      'ds.jsonl:3: FAIL_TO_PASS: expected a list of test names, got string that is not a JSON list of strings — give a list of strings, or a JSON-encoded list as in the Hugging Face datasets',
      'ds.jsonl:4: instance_id: missing (expected string) — add "instance_id" (SWE-bench instances carry instance_id, repo, base_commit, test_patch, FAIL_TO_PASS, PASS_TO_PASS)',
    ]);
  });
});

describeWith([sharedDataNeed(DATASET)], 'importSweBenchPredictions', () => {
  let options: SweBenchImportOptions;
  beforeAll(() => {
    options = loadDataset();
  });
  const forms = {
    'preds.json (dict)': JSON.stringify(
      Object.fromEntries(
        predictions.map((p) => [
          p.instance_id,
          { model_patch: p.model_patch, model_name_or_path: p.model_name_or_path },
        ]),
      ),
    ),
    'preds.json (list)': JSON.stringify(predictions),
    'all_preds.jsonl': predictions.map((p) => JSON.stringify(p)).join('\n'),
  };

  it.each(Object.entries(forms))('turns %s into grading-only episodes', (name, text) => {
    const path = name.split(' ')[0]!;
    const { episodes, problems } = importSweBenchPredictions({ path, text }, options);
    expect(problems).toEqual([]);
    expect(episodes.map((e) => [e.episode_id, e.model_patch])).toEqual([
      ['django__django-16255', 'diff --git a/django/x.py b/django/x.py\n'],
      ['sympy__sympy-13031', ''],
      ['pytest-dev__pytest-11143', null],
    ]);
    const django = episodes[0]!;
    expect(django.trajectory).toEqual([]);
    expect(django.sandbox.image).toBe('swebench/sweb.eval.x86_64.django_1776_django-16255:latest');
    expect(django.eval).toMatchObject({
      repo: 'django/django',
      FAIL_TO_PASS: ['test_callable_sitemod_no_items (sitemaps_tests.test_http.HTTPSitemapTests)'],
    });
    expect(django.metadata).toMatchObject({ model: 'gpt4', source_format: 'swebench-predictions' });
  });

  it('reports predictions for unknown instances and bad patches', () => {
    const text = JSON.stringify({
      'nope__nope-1': { model_patch: 'x' },
      'django__django-15781': { model_patch: 5 },
      'django__django-16255': {},
    });
    const { episodes, problems } = importSweBenchPredictions({ path: 'preds.json', text }, options);
    expect(episodes).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      'preds.json:$["nope__nope-1"]: instance_id: instance "nope__nope-1" is not in the dataset — pass the dataset file that contains this instance, or remove the prediction',
      'preds.json:$["django__django-15781"]: model_patch: expected string or null, got number — give the patch text; "" or null mean an empty prediction',
      'preds.json:$["django__django-16255"]: model_patch: missing (expected string or null) — give the patch text; "" or null mean an empty prediction',
    ]);
    const noDataset = importSweBenchPredictions(
      { path: 'p.json', text: JSON.stringify(predictions) },
      { ...options, instances: new Map() },
    );
    expect(noDataset.problems[0]!.hint).toMatch(/pass the SWE-bench dataset file/);
  });

  it('builds gold episodes from the dataset patch', () => {
    const { instances } = parseSweBenchInstances(dataset());
    const { episodes } = importSweBenchGold(instances, options);
    expect(episodes).toHaveLength(5);
    expect(episodes[0]!.model_patch).toBe(instances[0]!.instance.patch);
    expect(episodes[0]!.metadata).toMatchObject({ model: 'gold' });
  });
});
