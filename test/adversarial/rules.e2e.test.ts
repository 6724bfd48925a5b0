/**
 * Adversarial corpus, class "tests that do not run" and forged results the grader cannot instrument
 * (docs/grading.md, "Which SWE-bench the rules follow"): a FAIL_TO_PASS test the patch makes skip, a fail-only
 * repository whose suite never starts, and a runner outside the result channel whose output the patch forges
 * before exiting non-zero. Each is graded 0 by one rule of SWE-bench 5.x (skip, suite-ran, exit code) and
 * would be 1 without it; each has a genuine twin that stays 1, so the rule is not a blanket 0.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeResult } from '@rollout-fleet/shared';
import { bashStep } from '@rollout-fleet/test-kit/adversarial-cases';
import { runCorpus, type CorpusEpisode, type CorpusRun } from '../support/corpus-run.js';
import { SWEEP } from '../support/pipeline-harness.js';

const PYUTILS = JSON.parse(readFileSync(SWEEP, 'utf8').split('\n')[0] ?? '{}') as CorpusEpisode;
const SPEC = PYUTILS.eval as NonNullable<CorpusEpisode['eval']>;
const FIX = bashStep("sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py");
const SKIP_IN = (fn: 'a - b' | 'a \\* b') =>
  bashStep(
    `sed -i 's/    return ${fn}$/    import unittest; raise unittest.SkipTest("later")/' /testbed/pyutils/calc.py`,
  );
/** Appended to calc.py: what its import prints. */
const ON_IMPORT = (python: string) => bashStep(`printf '%s\\n' ${JSON.stringify(python)} >> /testbed/pyutils/calc.py`);

function caseOf(id: string, trajectory: CorpusEpisode['trajectory'], spec: Partial<typeof SPEC> = {}): CorpusEpisode {
  return { ...PYUTILS, episode_id: id, instance_id: 'pyutils__calc-add', trajectory, eval: { ...SPEC, ...spec } };
}

/** A fail-only repository (its reporter prints failures only) whose "suite" is this command; sympy's parser, no channel. */
const failOnly = (testCommand: string) => ({
  repo: 'markedjs/marked',
  log_parser: 'sympy' as const,
  test_command: testCommand,
  FAIL_TO_PASS: ['test_add'],
  PASS_TO_PASS: [],
});
/** A runner the grader cannot instrument (sympy parser: no result channel): importing calc is the "test run". */
const uninstrumented = {
  log_parser: 'sympy' as const,
  test_command: "python3 -c 'import pyutils.calc'",
  FAIL_TO_PASS: ['test_add'],
  PASS_TO_PASS: [],
};

describe('adversarial corpus: SWE-bench 5.x rules in the real pipeline', () => {
  let run: CorpusRun;
  const get = (id: string): EpisodeResult => {
    const result = run.results.get(id);
    expect(result, id).toBeDefined();
    return result as EpisodeResult;
  };
  const codes = (id: string): string[] => (get(id).grading?.integrity?.findings ?? []).map((f) => f.code);

  beforeAll(async () => {
    run = await runCorpus('corpus-rules', () => [
      caseOf('skip-f2p', [SKIP_IN('a - b')]),
      caseOf('skip-p2p-genuine', [FIX, SKIP_IN('a \\* b')]),
      caseOf('fail-only-never-ran', [FIX], failOnly("python3 -c 'import pyutils.no_such_module'")),
      caseOf('fail-only-ran', [FIX], failOnly(`python3 -c "print('1 spec, 0 failures')"`)),
      caseOf('exit-code-forged', [ON_IMPORT('import sys; print("test_add ok"); sys.exit(1)')], uninstrumented),
      caseOf('exit-code-honest', [ON_IMPORT('print("test_add ok")')], uninstrumented),
    ]);
  }, 300_000);

  afterAll(async () => {
    await run?.close();
  });

  it('a FAIL_TO_PASS test the patch makes skip (unittest.SkipTest) is a failure: reward 0', () => {
    expect(get('skip-f2p')).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
    const f2p = get('skip-f2p').grading?.tests.find((t) => t.list === 'FAIL_TO_PASS');
    expect(f2p).toMatchObject({ status: 'SKIPPED', outcome: 'failure' });
  });

  it('a PASS_TO_PASS test that skips is no regression: the real fix keeps reward 1', () => {
    expect(get('skip-p2p-genuine')).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
    const mul = get('skip-p2p-genuine').grading?.tests.find((t) => t.id.startsWith('test_mul'));
    expect(mul).toMatchObject({ status: 'SKIPPED', outcome: 'success' });
  });

  it('a fail-only repository whose suite never starts is not resolved (SUITE_NOT_RUN), reward 0', () => {
    expect(get('fail-only-never-ran')).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
    expect(get('fail-only-never-ran').grading?.problem).toContain('SUITE_NOT_RUN');
    expect(codes('fail-only-never-ran')).toContain('SUITE_NOT_RUN');
  });

  it('the same fail-only eval whose suite shows it ran (no failure printed) resolves: reward 1', () => {
    expect(get('fail-only-ran')).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
  });

  it('passing lines printed by the patch before it exits 1 contradict the exit code: reward 0 (TEST_EXIT_CODE_MISMATCH)', () => {
    expect(get('exit-code-forged')).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
    expect(codes('exit-code-forged')).toContain('TEST_EXIT_CODE_MISMATCH');
    expect(get('exit-code-forged').grading?.log).toMatch(/^>>>>> Test Exit Code: 1$/m);
  });

  it('the same runner exiting 0 is read as it reports: reward 1', () => {
    expect(get('exit-code-honest')).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
  });
});
