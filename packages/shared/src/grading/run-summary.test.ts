import { describe, expect, it } from 'vitest';
import { toPythonJson } from './python-json.js';
import { summarizeRun } from './run-summary.js';

const report = (resolved: boolean) => ({
  patch_is_None: false,
  patch_exists: true,
  patch_successfully_applied: true,
  resolved,
});

describe('summarizeRun', () => {
  it('sorts every instance into the harness buckets', () => {
    const summary = summarizeRun([
      { instance_id: 'b__b-2', model_patch: 'diff', report: report(true) },
      { instance_id: 'a__a-1', model_patch: 'diff', report: report(false) },
      { instance_id: 'c__c-3', model_patch: '' },
      { instance_id: 'd__d-4', model_patch: null },
      { instance_id: 'e__e-5', model_patch: 'diff', report: null },
      { instance_id: 'f__f-6', submitted: false },
      { instance_id: 'g__g-7', model_patch: 'diff', report: { resolved: 'yes' } },
      { instance_id: 'z__z-9', in_dataset: false, model_patch: 'diff', report: report(true) },
    ]);
    expect(summary).toEqual({
      total_instances: 7,
      submitted_instances: 7,
      completed_instances: 3,
      resolved_instances: 1,
      unresolved_instances: 1,
      empty_patch_instances: 2,
      error_instances: 2,
      completed_ids: ['a__a-1', 'b__b-2', 'g__g-7'],
      incomplete_ids: ['f__f-6'],
      empty_patch_ids: ['c__c-3', 'd__d-4'],
      submitted_ids: ['a__a-1', 'b__b-2', 'c__c-3', 'd__d-4', 'e__e-5', 'g__g-7', 'z__z-9'],
      resolved_ids: ['b__b-2'],
      unresolved_ids: ['a__a-1'],
      error_ids: ['e__e-5', 'g__g-7'],
      schema_version: 2,
    });
  });

  it('counts an episode that never reached a grade (infra, a missing image) as an error instance, not an empty patch', () => {
    const summary = summarizeRun([
      { instance_id: 'a__a-1', model_patch: null, report: null, failed: true },
      { instance_id: 'b__b-2', model_patch: null, report: null },
      { instance_id: 'c__c-3', model_patch: 'diff', report: report(true) },
    ]);
    expect(summary).toMatchObject({
      total_instances: 3,
      completed_instances: 1,
      empty_patch_instances: 1,
      error_instances: 1,
      empty_patch_ids: ['b__b-2'],
      error_ids: ['a__a-1'],
      resolved_ids: ['c__c-3'],
    });
  });

  it('sorts ids by code point like Python, not by locale', () => {
    const summary = summarizeRun(
      ['b', 'B', 'a', '_x'].map((id) => ({ instance_id: id, model_patch: 'd', report: report(true) })),
    );
    expect(summary.resolved_ids).toEqual(['B', '_x', 'a', 'b']);
  });
});

describe('toPythonJson', () => {
  it('writes like json.dumps(indent=4), escaping non-ASCII', () => {
    expect(toPythonJson({ 'x__y-1': { resolved: true, ids: [], names: ['café ✓'] } })).toBe(
      '{\n    "x__y-1": {\n        "resolved": true,\n        "ids": [],\n        "names": [\n            "caf\\u00e9 \\u2713"\n        ]\n    }\n}',
    );
  });
});
