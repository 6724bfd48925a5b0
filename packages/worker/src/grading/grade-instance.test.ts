import { describe, expect, it } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { gradeInstance, type GradeInstanceInput } from './grade-instance.js';

interface Instance {
  instance_id: string;
  repo: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
}
const DATASET = 'swe-agent/swe-bench-lite-test.json';
const instances = (): Instance[] => JSON.parse(readSharedData(DATASET)) as Instance[];

const wrap = (lines: string[]): string =>
  ["+ : '>>>>> Start Test Output'", ...lines, "+ : '>>>>> End Test Output'"].join('\n');

function grade(overrides: Partial<GradeInstanceInput> & Pick<GradeInstanceInput, 'log'>) {
  return gradeInstance({
    instanceId: 'o__r-1',
    eval: { repo: 'o/r', FAIL_TO_PASS: ['t.py::f'], PASS_TO_PASS: ['t.py::p'] },
    patch: 'diff --git a/x b/x\n',
    patchApplied: true,
    ...overrides,
  });
}

describe('logs that do not describe a run (SWE-bench main get_logs_eval)', () => {
  it('a log reporting only passes from a test command that exited 1 is not resolved', () => {
    const log = `${wrap(['PASSED t.py::f', 'PASSED t.py::p'])}\n>>>>> Test Exit Code: 1\n`;
    const result = grade({ log });
    expect(result.report).toMatchObject({ patch_successfully_applied: false, resolved: false });
    expect(result.view.rejection).toBe('exit-code-mismatch');
    expect(grade({ log: log.replace('Exit Code: 1', 'Exit Code: 0') }).report.resolved).toBe(true);
  });

  it('a fail-only repository whose suite never started is not resolved', () => {
    const spec = { repo: 'markedjs/marked', FAIL_TO_PASS: ['renders x'], PASS_TO_PASS: [] };
    const never = grade({ eval: spec, log: wrap(['Error: Cannot find module jasmine']) });
    expect(never.report.resolved).toBe(false);
    expect(never.view.rejection).toBe('suite-not-run');
    expect(grade({ eval: spec, log: wrap(['12 specs, 0 failures']) }).report.resolved).toBe(true);
  });
});

describe('resolved rule truth table (§6.3)', () => {
  it.each([
    // [F2P status line, P2P status line, resolution, f2pRate, p2pRate]
    ['PASSED t.py::f', 'PASSED t.py::p', 'RESOLVED_FULL', 1, 1],
    ['XFAIL t.py::f', 'PASSED t.py::p', 'RESOLVED_FULL', 1, 1],
    ['FAILED t.py::f', 'PASSED t.py::p', 'RESOLVED_NO', 0, 1],
    ['ERROR t.py::f', 'PASSED t.py::p', 'RESOLVED_NO', 0, 1],
    ['', 'PASSED t.py::p', 'RESOLVED_NO', 0, 1], // missing = failure
    ['PASSED t.py::f', 'FAILED t.py::p', 'RESOLVED_NO', 1, 0],
    ['PASSED t.py::f', '', 'RESOLVED_NO', 1, 0],
    // SWE-bench 5.x: a skipped FAIL_TO_PASS test resolved nothing; a skipped PASS_TO_PASS test broke nothing.
    ['SKIPPED t.py::f', 'PASSED t.py::p', 'RESOLVED_NO', 0, 1],
    ['PASSED t.py::f', 'SKIPPED t.py::p', 'RESOLVED_FULL', 1, 1],
  ] as const)('%j + %j → %s', (f2pLine, p2pLine, resolution, f2pRate, p2pRate) => {
    const result = grade({ log: wrap([f2pLine, p2pLine, 'PASSED other::z']) });
    expect(result).toMatchObject({ resolution, f2pRate, p2pRate });
    expect(result.report.resolved).toBe(resolution === 'RESOLVED_FULL');
  });

  it('reports a skipped FAIL_TO_PASS test as a failure, a skipped PASS_TO_PASS one as a success, and fills FAIL_TO_FAIL / PASS_TO_FAIL with empty lists', () => {
    const result = grade({ log: wrap(['SKIPPED t.py::f', 'SKIPPED t.py::p']) });
    expect(result.report).toEqual({
      patch_is_None: false,
      patch_exists: true,
      patch_successfully_applied: true,
      resolved: false,
      tests_status: {
        FAIL_TO_PASS: { success: [], failure: ['t.py::f'] },
        PASS_TO_PASS: { success: ['t.py::p'], failure: [] },
        FAIL_TO_FAIL: { success: [], failure: [] },
        PASS_TO_FAIL: { success: [], failure: [] },
      },
    });
  });

  it('grades partial resolution only when every PASS_TO_PASS test still passes', () => {
    const evalSpec = {
      repo: 'o/r',
      FAIL_TO_PASS: ['t.py::f1', 't.py::f2', 't.py::f3', 't.py::f4'],
      PASS_TO_PASS: ['t.py::p'],
    };
    const log = wrap(['PASSED t.py::f1', 'FAILED t.py::f2', 'PASSED t.py::f3', 'XFAIL t.py::f4', 'PASSED t.py::p']);
    const partial = grade({ eval: evalSpec, log });
    expect(partial).toMatchObject({ resolution: 'RESOLVED_PARTIAL', f2pRate: 0.75, p2pRate: 1 });
    expect(partial.report.resolved).toBe(false);
    const broken = grade({ eval: evalSpec, log: log.replace('PASSED t.py::p', 'ERROR t.py::p') });
    expect(broken).toMatchObject({ resolution: 'RESOLVED_NO', f2pRate: 0.75, p2pRate: 0 });
  });

  it('treats empty FAIL_TO_PASS and PASS_TO_PASS lists as rate 1', () => {
    const result = grade({ eval: { repo: 'o/r', FAIL_TO_PASS: [], PASS_TO_PASS: [] }, log: wrap(['PASSED a::b']) });
    expect(result).toMatchObject({ resolution: 'RESOLVED_FULL', f2pRate: 1, p2pRate: 1 });
  });

  it('grades fail-only repositories: only a present FAILED hurts, missing and ERROR count as success', () => {
    const evalSpec = { repo: 'chartjs/Chart.js', FAIL_TO_PASS: ['t.py::f', 't.py::g'], PASS_TO_PASS: ['t.py::p'] };
    const ok = grade({ eval: evalSpec, log: wrap(['ERROR t.py::f', 'PASSED unrelated::x']) });
    expect(ok).toMatchObject({ resolution: 'RESOLVED_FULL', f2pRate: 1, p2pRate: 1 });
    expect(ok.report.tests_status?.FAIL_TO_PASS).toEqual({ success: ['t.py::f', 't.py::g'], failure: [] });
    const failed = grade({ eval: evalSpec, log: wrap(['FAILED t.py::g']) });
    expect(failed).toMatchObject({ resolution: 'RESOLVED_PARTIAL', f2pRate: 0.5 });
  });

  it('uses eval.log_parser over the repository default', () => {
    const log = wrap(['test_f (m.T) ... ok']);
    const evalSpec = { repo: 'o/r', FAIL_TO_PASS: ['test_f (m.T)'], PASS_TO_PASS: [] };
    expect(grade({ eval: evalSpec, log }).resolution).toBe('RESOLVED_NO');
    expect(grade({ eval: { ...evalSpec, log_parser: 'django' }, log }).resolution).toBe('RESOLVED_FULL');
  });
});

describe('report flags (§6.4)', () => {
  it('a null patch yields patch_is_None and nothing else', () => {
    const result = grade({ patch: null, log: wrap(['PASSED t.py::f', 'PASSED t.py::p']) });
    expect(result).toEqual({
      report: { patch_is_None: true, patch_exists: false, patch_successfully_applied: false, resolved: false },
      resolution: 'RESOLVED_NO',
      f2pRate: 0,
      p2pRate: 0,
      // The log was not read: no test ran as far as grading is concerned.
      view: { parser: 'pytest', parserSource: 'repository', testsRan: false, statuses: {}, mode: 'pass_and_fail' },
    });
  });

  it('a patch that did not apply, or a log without usable output, has no tests_status', () => {
    const notApplied = grade({ patchApplied: false, log: wrap(['PASSED t.py::f', 'PASSED t.py::p']) });
    expect(notApplied.report).toEqual({
      patch_is_None: false,
      patch_exists: true,
      patch_successfully_applied: false,
      resolved: false,
    });
    const failedMarker = grade({ log: `>>>>> Patch Apply Failed:\n${wrap(['PASSED t.py::f', 'PASSED t.py::p'])}` });
    expect(failedMarker.report.patch_successfully_applied).toBe(false);
    expect(failedMarker.report.tests_status).toBeUndefined();
    expect(grade({ log: 'PASSED t.py::f\nPASSED t.py::p' }).report.patch_successfully_applied).toBe(false);
  });
});

describeWith([sharedDataNeed(DATASET)], 'real SWE-bench Lite instance', () => {
  it('resolves django__django-16255 when every listed test reports ok, and not when one P2P test fails', () => {
    const instance = instances().find((i) => i.instance_id === 'django__django-16255');
    if (!instance) throw new Error('fixture instance missing');
    const lines = [...instance.FAIL_TO_PASS, ...instance.PASS_TO_PASS].map((name) => `${name} ... ok`);
    const evalSpec = { repo: instance.repo, FAIL_TO_PASS: instance.FAIL_TO_PASS, PASS_TO_PASS: instance.PASS_TO_PASS };
    const input = { instanceId: instance.instance_id, eval: evalSpec, patch: 'diff', patchApplied: true };
    const full = gradeInstance({ ...input, log: wrap(lines) });
    expect(full.resolution).toBe('RESOLVED_FULL');
    expect(full.report.tests_status?.PASS_TO_PASS.success).toHaveLength(instance.PASS_TO_PASS.length);

    const broken = lines.map((line) =>
      line.startsWith('A simple sitemap can be rendered ...') ? 'A simple sitemap can be rendered ... FAIL' : line,
    );
    const graded = gradeInstance({ ...input, log: wrap(broken) });
    expect(graded.resolution).toBe('RESOLVED_NO');
    expect(graded.report.tests_status?.PASS_TO_PASS.failure).toEqual(['A simple sitemap can be rendered']);
    expect(graded.p2pRate).toBeCloseTo((instance.PASS_TO_PASS.length - 1) / instance.PASS_TO_PASS.length);
  });
});
