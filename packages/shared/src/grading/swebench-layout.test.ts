import { describe, expect, it } from 'vitest';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import type { EpisodeResult, GradingDetails } from '../contracts/result.js';
import { instanceLayout, swebenchTree } from './swebench-layout.js';

const APPLY = '>>>>> Applied Patch:\nChecking patch a.py...\nApplied patch a.py cleanly.\n';
const TESTS = "+ : '>>>>> Start Test Output'\nPASSED t.py::test_a\n+ : '>>>>> End Test Output'\n";

function grading(log: string, extra: Partial<GradingDetails> = {}): GradingDetails {
  return {
    parser: 'pytest',
    parser_source: 'repository',
    tests_ran: true,
    timed_out: false,
    tests_parsed: 1,
    tests: [],
    problem: null,
    log,
    log_bytes: Buffer.byteLength(log),
    log_truncated: false,
    eval_script: '#!/bin/bash\nset -uxo pipefail\n',
    eval_output_offset: Buffer.byteLength(APPLY),
    ...extra,
  };
}

const graded = (id: string, fields: Partial<EpisodeResult> = {}): EpisodeResult =>
  resultFixture({
    run_id: 'r1',
    episode_id: id,
    instance_id: id,
    patch: 'diff --git a/a.py b/a.py\n',
    metadata: { model: 'org/m-1' },
    report: { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: true },
    grading: grading(APPLY + TESTS),
    ...fields,
  });

describe('instanceLayout: the files run_instance leaves for one prediction', () => {
  it('a graded instance: all five files, test_output.txt without the apply step, the model path with / → __', () => {
    const layout = instanceLayout(graded('a-1'));
    expect(layout.dir).toBe('logs/run_evaluation/r1/org__m-1/a-1');
    expect(Object.keys(layout.files).sort()).toEqual([
      'eval.sh',
      'patch.diff',
      'report.json',
      'run_instance.log',
      'test_output.txt',
    ]);
    expect(layout.files['test_output.txt']).toBe(TESTS);
    expect(layout.files['run_instance.log']).toContain(' - INFO - >>>>> Applied Patch:\nChecking patch a.py...\n');
  });

  it('an eval past its timeout keeps test_output.txt with the notice, but no report.json: an error', () => {
    const log = `${APPLY}+ : '>>>>> Start Test Output'\nstill running\n\nTimeout error: 60 seconds exceeded.`;
    const layout = instanceLayout(graded('t-1', { grading: grading(log, { timed_out: true, tests_ran: false }) }));
    expect(layout.outcome).toBe('error');
    expect(layout.files['report.json']).toBeUndefined();
    expect(layout.files['test_output.txt']?.endsWith('Timeout error: 60 seconds exceeded.')).toBe(true);
    expect(layout.files['run_instance.log']).toContain('Test timed out after 60 seconds.');
  });

  it('a failed episode leaves only run_instance.log, saying why; an empty patch leaves nothing', () => {
    const failed = instanceLayout(
      graded('f-1', {
        status: 'failed',
        patch: null,
        report: null,
        failure: { code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' },
      }),
    );
    expect(Object.keys(failed.files)).toEqual(['run_instance.log']);
    expect(failed.files['run_instance.log']).toContain(
      ' - ERROR - Error in evaluating model for f-1: SANDBOX_DEAD (infra): gone',
    );
    expect(instanceLayout(graded('e-1', { patch: '' }))).toMatchObject({ outcome: 'empty_patch', files: {} });
  });

  it('a cut log splits at the offset while it lies in the head; the whole log from the artifacts replaces it', () => {
    const cut = `${APPLY}+ : '>>>>> Start\n[... output truncated: 9999 bytes in total, 9000 bytes omitted ...]\ntail\n`;
    const result = graded('c-1', { grading: grading(cut, { log_truncated: true, log_bytes: 9999 }) });
    expect(instanceLayout(result).files['test_output.txt']?.startsWith("+ : '>>>>> Start\n[... output truncated")).toBe(
      true,
    );
    expect(instanceLayout(result, { fullEvalLog: () => APPLY + TESTS }).files['test_output.txt']).toBe(TESTS);
  });
});

describe('swebenchTree', () => {
  it('one run report per model over the whole dataset; one prediction per instance, the rest named', () => {
    const tree = swebenchTree({
      runId: 'r1',
      dataset: ['a-1', 'b-2', 'c-3'],
      results: [graded('a-1'), graded('a-1', { sample_index: 1 }), graded('b-2', { metadata: { model: 'gold' } })],
    });
    expect(
      tree.reports.map((r) => [r.path, r.report.total_instances, r.report.resolved_ids, r.report.incomplete_ids]),
    ).toEqual([
      ['gold.r1.json', 3, ['b-2'], ['a-1', 'c-3']],
      ['org__m-1.r1.json', 3, ['a-1'], ['b-2', 'c-3']],
    ]);
    expect(tree.warnings).toEqual([
      'a-1 (org/m-1): episode a-1 sample 1 left out; SWE-bench keeps one prediction per instance (kept episode a-1 sample 0)',
    ]);
    expect(tree.files.has('logs/run_evaluation/r1/gold/b-2/report.json')).toBe(true);
  });
});
