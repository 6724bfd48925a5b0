import { describe, expect, it } from 'vitest';
import { makeRunReport, type SwebenchPrediction } from './run-report.js';
import { toPythonJson } from './python-json.js';

const entry = (resolved: unknown) => ({ patch_is_None: false, patch_exists: true, resolved });
const pred = (id: string, patch: string | null, model = 'org/model'): SwebenchPrediction => ({
  instance_id: id,
  model_name_or_path: model,
  model_patch: patch,
});

describe('makeRunReport (swebench/harness/reporting.py, make_run_report)', () => {
  it('counts over the whole dataset: incomplete without a prediction, empty patches apart, errors without report.json', () => {
    const files: Record<string, string> = {
      'b__b-2': JSON.stringify({ 'b__b-2': entry(true) }),
      'a__a-1': JSON.stringify({ 'a__a-1': entry(false) }),
      // The harness: an existing but empty, unparsable or keyless report.json is completed *and* an error.
      'g__g-7': '  \n',
      'h__h-8': '{"h__h-8": ',
      'i__i-9': JSON.stringify({ 'other-id': entry(true) }),
    };
    const predictions = new Map(
      [
        pred('b__b-2', 'diff'),
        pred('a__a-1', 'diff'),
        pred('c__c-3', ''),
        pred('d__d-4', null),
        pred('e__e-5', 'diff'),
        pred('g__g-7', 'diff'),
        pred('h__h-8', 'diff'),
        pred('i__i-9', 'diff'),
      ].map((p) => [p.instance_id, p]),
    );
    const report = makeRunReport({
      predictions,
      dataset: ['a__a-1', 'b__b-2', 'c__c-3', 'd__d-4', 'e__e-5', 'f__f-6', 'g__g-7', 'h__h-8', 'i__i-9'],
      readReport: (p) => files[p.instance_id],
      readLogs: () => [],
    });
    expect(report).toEqual({
      total_instances: 9,
      submitted_instances: 8,
      completed_instances: 5,
      resolved_instances: 1,
      unresolved_instances: 1,
      infra_failure_instances: 0,
      ambiguous_failure_instances: 0,
      empty_patch_instances: 2,
      error_instances: 4,
      completed_ids: ['a__a-1', 'b__b-2', 'g__g-7', 'h__h-8', 'i__i-9'],
      incomplete_ids: ['f__f-6'],
      empty_patch_ids: ['c__c-3', 'd__d-4'],
      submitted_ids: ['a__a-1', 'b__b-2', 'c__c-3', 'd__d-4', 'e__e-5', 'g__g-7', 'h__h-8', 'i__i-9'],
      resolved_ids: ['b__b-2'],
      unresolved_ids: ['a__a-1'],
      infra_failure_ids: [],
      ambiguous_failure_ids: [],
      failure_reasons: {},
      error_ids: ['e__e-5', 'g__g-7', 'h__h-8', 'i__i-9'],
      schema_version: 2,
    });
    // The harness's key order, which json.dumps keeps.
    expect(Object.keys(JSON.parse(toPythonJson(report)) as object)).toEqual([
      'total_instances',
      'submitted_instances',
      'completed_instances',
      'resolved_instances',
      'unresolved_instances',
      'infra_failure_instances',
      'ambiguous_failure_instances',
      'empty_patch_instances',
      'error_instances',
      'completed_ids',
      'incomplete_ids',
      'empty_patch_ids',
      'submitted_ids',
      'resolved_ids',
      'unresolved_ids',
      'infra_failure_ids',
      'ambiguous_failure_ids',
      'failure_reasons',
      'error_ids',
      'schema_version',
    ]);
  });

  it('triages unresolved and error instances by their logs (environment vs ambiguous), never resolved ones', () => {
    const logs: Record<string, string[]> = {
      'a-1': ['collected 0 items\n'],
      'b-2': ['ok', 'fatal: Could not resolve host: github.com'],
      'c-3': ['Killed'],
      'd-4': ['Killed\n'],
      'e-5': ['nothing to see'],
    };
    const reports: Record<string, string> = {
      'a-1': JSON.stringify({ 'a-1': entry(false) }),
      'c-3': JSON.stringify({ 'c-3': entry(true) }),
      'd-4': JSON.stringify({ 'd-4': entry(0) }),
      'e-5': JSON.stringify({ 'e-5': entry(false) }),
    };
    const report = makeRunReport({
      predictions: new Map(['a-1', 'b-2', 'c-3', 'd-4', 'e-5'].map((id) => [id, pred(id, 'diff')])),
      dataset: ['a-1', 'b-2', 'c-3', 'd-4', 'e-5'],
      readReport: (p) => reports[p.instance_id],
      readLogs: (p) => logs[p.instance_id] ?? [],
    });
    expect(report).toMatchObject({
      resolved_ids: ['c-3'],
      unresolved_ids: ['a-1', 'd-4', 'e-5'],
      error_ids: ['b-2'],
      infra_failure_ids: ['b-2', 'd-4'],
      ambiguous_failure_ids: ['a-1'],
      failure_reasons: { 'a-1': 'no_tests_collected', 'b-2': 'network_unreachable', 'd-4': 'out_of_memory' },
    });
  });

  it('sorts ids by code point like Python, not by locale', () => {
    const ids = ['b', 'B', 'a', '_x'];
    const report = makeRunReport({
      predictions: new Map(ids.map((id) => [id, pred(id, 'd')])),
      dataset: ids,
      readReport: (p) => JSON.stringify({ [p.instance_id]: entry(true) }),
      readLogs: () => [],
    });
    expect(report.resolved_ids).toEqual(['B', '_x', 'a', 'b']);
  });
});

describe('toPythonJson', () => {
  it('writes like json.dumps(indent=4), escaping non-ASCII', () => {
    expect(toPythonJson({ 'x__y-1': { resolved: true, ids: [], names: ['café ✓'] } })).toBe(
      '{\n    "x__y-1": {\n        "resolved": true,\n        "ids": [],\n        "names": [\n            "caf\\u00e9 \\u2713"\n        ]\n    }\n}',
    );
  });
});
