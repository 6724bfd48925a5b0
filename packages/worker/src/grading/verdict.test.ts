/**
 * The verdict rules, one table each. Expected values come from the documented rules: docs/grading.md ("The
 * resolved rule": reward RF_REWARD_RESOLVED / RF_REWARD_UNRESOLVED, null when not graded or infra),
 * docs/adversarial-grading.md (vectors 11, 13, 13b and the error table) and packages/shared/src/errors/codes.ts.
 */
import {
  RolloutError,
  classOf,
  type Attempt,
  type ErrorCode,
  type EvalSpec,
  type Failure,
  type GradingReport,
} from '@rollout-fleet/shared';
import { describe, expect, it } from 'vitest';
import type { SandboxGrade } from './grade-in-sandbox.js';
import { untestedDetails } from './grading-details.js';
import {
  SANDBOX_LOSS,
  emptyPatch,
  escapedError,
  evalSandboxLost,
  failureOf,
  graded,
  lostAfterModel,
  lostInStep,
  noPatchTaken,
  onGradingSandboxFailure,
  repositoryMissing,
  rewardFor,
  stepThatKillsItsSandbox,
  ungraded,
  type Rewards,
  type Verdict,
} from './verdict.js';

/** RF_REWARD_RESOLVED and RF_REWARD_UNRESOLVED defaults (docs/grading.md), and configured ones (any finite number). */
const DEFAULTS: Rewards = { resolved: 1, unresolved: 0 };
const CONFIGURED: Rewards = { resolved: 2, unresolved: -0.5 };

const SPEC: EvalSpec = {
  repo: 'o/r',
  FAIL_TO_PASS: ['t.py::f'],
  PASS_TO_PASS: ['t.py::p'],
  test_command: 'pytest -rA',
  timeout_s: 60,
};

const failure = (code: ErrorCode, message = 'm'): Failure => ({ code, class: classOf(code), message });

function sandboxGrade(report: GradingReport): SandboxGrade {
  return {
    report,
    resolution: report.resolved ? 'RESOLVED_FULL' : 'RESOLVED_NO',
    patch: 'diff',
    log: '',
    testsTimedOut: false,
    details: untestedDetails(SPEC, 'x'),
  };
}
const APPLIED = { patch_is_None: false, patch_exists: true, patch_successfully_applied: true };

/** What a verdict says, for the table: who is to blame and what it earns. */
function summary(v: Verdict): Record<string, unknown> {
  return {
    resolved: v.resolved,
    reward: v.reward,
    failure: v.failure ? `${v.failure.code}/${v.failure.class}` : null,
    gradedIn: v.gradedIn,
    patchIsNone: v.report?.patch_is_None ?? null,
  };
}

describe('verdicts', () => {
  it.each([
    { resolved: true, rewards: DEFAULTS, reward: 1 },
    { resolved: false, rewards: DEFAULTS, reward: 0 },
    { resolved: true, rewards: CONFIGURED, reward: 2 },
    { resolved: false, rewards: CONFIGURED, reward: -0.5 },
  ])('a graded episode earns the configured reward: resolved $resolved → $reward', ({ resolved, rewards, reward }) => {
    expect(rewardFor(resolved, rewards)).toBe(reward);
  });

  const extraction = failure('PATCH_EXTRACTION_FAILED');
  const cases: Array<{ rule: string; verdict: Verdict; expected: ReturnType<typeof summary> }> = [
    {
      rule: 'no eval spec: not graded, reward null',
      verdict: ungraded('diff', null),
      expected: { resolved: null, reward: null, failure: null, gradedIn: null, patchIsNone: null },
    },
    {
      rule: 'no eval spec and no patch could be taken: still not graded, the failure kept',
      verdict: ungraded(null, extraction),
      expected: {
        resolved: null,
        reward: null,
        failure: 'PATCH_EXTRACTION_FAILED/model',
        gradedIn: null,
        patchIsNone: null,
      },
    },
    {
      rule: 'the tests resolved the issue (fresh sandbox)',
      verdict: graded(sandboxGrade({ ...APPLIED, resolved: true }), 'fresh', DEFAULTS),
      expected: { resolved: true, reward: 1, failure: null, gradedIn: 'fresh', patchIsNone: false },
    },
    {
      rule: 'the tests did not resolve it (in place)',
      verdict: graded(sandboxGrade({ ...APPLIED, resolved: false }), 'in-place', CONFIGURED),
      expected: { resolved: false, reward: -0.5, failure: null, gradedIn: 'in-place', patchIsNone: false },
    },
    {
      rule: 'vector 15: a patch that does not apply is unresolved',
      verdict: graded(
        sandboxGrade({ ...APPLIED, patch_successfully_applied: false, resolved: false }),
        'fresh',
        DEFAULTS,
      ),
      expected: { resolved: false, reward: 0, failure: null, gradedIn: 'fresh', patchIsNone: false },
    },
    {
      rule: 'a null patch (no prediction) runs nothing: unresolved, patch_is_None',
      verdict: emptyPatch(SPEC, null, DEFAULTS),
      expected: { resolved: false, reward: 0, failure: null, gradedIn: null, patchIsNone: true },
    },
    {
      rule: 'an empty patch runs nothing: unresolved',
      verdict: emptyPatch(SPEC, '  \n', CONFIGURED),
      expected: { resolved: false, reward: -0.5, failure: null, gradedIn: null, patchIsNone: false },
    },
    {
      rule: 'vector 11: a repository the model broke is graded as no patch, reward 0, never retried',
      verdict: noPatchTaken(SPEC, extraction, DEFAULTS),
      expected: {
        resolved: false,
        reward: 0,
        failure: 'PATCH_EXTRACTION_FAILED/model',
        gradedIn: null,
        patchIsNone: true,
      },
    },
    {
      rule: 'vector 13: the grading sandbox lost twice while the tests ran is unresolved, reward 0',
      verdict: evalSandboxLost(SPEC, { patch: 'diff', cause: new RolloutError('SANDBOX_DEAD', 'gone') }, DEFAULTS),
      expected: {
        resolved: false,
        reward: 0,
        failure: 'EVAL_SANDBOX_LOST/model',
        gradedIn: 'fresh',
        patchIsNone: false,
      },
    },
    {
      rule: 'vector 13b: a step that kills its sandbox in every attempt is graded as no patch, reward 0',
      verdict: lostInStep(SPEC, 3, DEFAULTS),
      expected: {
        resolved: false,
        reward: 0,
        failure: 'SANDBOX_LOST_IN_STEP/model',
        gradedIn: null,
        patchIsNone: true,
      },
    },
    {
      rule: 'vector 13b without an eval: not graded (reward null), the failure still named',
      verdict: lostInStep(undefined, 3, DEFAULTS),
      expected: {
        resolved: null,
        reward: null,
        failure: 'SANDBOX_LOST_IN_STEP/model',
        gradedIn: null,
        patchIsNone: null,
      },
    },
  ];
  it.each(cases)('$rule', ({ verdict, expected }) => {
    expect(summary(verdict)).toEqual(expected);
  });

  it('a graded verdict keeps how it was graded; one reached without running the tests says why', () => {
    const grade = sandboxGrade({ ...APPLIED, resolved: true });
    expect(graded(grade, 'fresh', DEFAULTS)).toMatchObject({
      patch: 'diff',
      report: grade.report,
      grading: grade.details,
    });
    for (const v of [
      emptyPatch(SPEC, null, DEFAULTS),
      noPatchTaken(SPEC, extraction, DEFAULTS),
      lostInStep(SPEC, 3, DEFAULTS),
    ]) {
      expect(v.grading?.tests_ran).toBe(false);
    }
    expect(noPatchTaken(SPEC, extraction, DEFAULTS).grading?.problem).toContain('PATCH_EXTRACTION_FAILED');
    expect(
      evalSandboxLost(SPEC, { patch: 'diff', cause: new RolloutError('SANDBOX_DEAD', 'gone') }, DEFAULTS).grading
        ?.problem,
    ).toContain('EVAL_SANDBOX_LOST');
    expect(lostInStep(SPEC, 3, DEFAULTS).grading?.problem).toContain('step 3');
    expect(lostInStep(SPEC, 3, DEFAULTS).patch).toBeNull();
    expect(noPatchTaken(SPEC, extraction, DEFAULTS).patch).toBeNull();
  });

  it("an eval without a repository to take the patch from is the episode's input error", () => {
    const err = repositoryMissing('/testbed');
    expect({ code: err.code, class: err.class }).toEqual({ code: 'INPUT_INVALID', class: 'input' });
    expect(err.message).toContain('/testbed');
  });
});

describe('a grading sandbox that fails', () => {
  const lost = [...SANDBOX_LOSS] as Array<ErrorCode>;
  const inPhase = (code: ErrorCode, phase: string): RolloutError =>
    new RolloutError(code, 'x', { details: { gradingPhase: phase } });

  it('counts as lost only for transport answers that mean the sandbox is gone, all of them infra', () => {
    expect(lost.sort()).toEqual(['GATEWAY_ERROR', 'SANDBOX_DEAD', 'SWEREX_NETWORK', 'SWEREX_TIMEOUT']);
    for (const code of lost) expect(classOf(code)).toBe('infra');
  });

  it.each([
    ...lost.flatMap((code) => [
      { code, phase: 'eval', round: 1, stopped: false, next: 'grade-again' },
      { code, phase: 'eval', round: 2, stopped: false, next: 'eval-sandbox-lost' },
      // Only the eval runs the patch's code: a sandbox lost before it was lost to us.
      { code, phase: 'setup', round: 1, stopped: false, next: 'throw' },
      { code, phase: 'apply', round: 2, stopped: false, next: 'throw' },
      // The attempt was stopped from outside: its own reason decides.
      { code, phase: 'eval', round: 2, stopped: true, next: 'throw' },
    ]),
    // Grading that could not run in a sandbox the model never touched, or any other error: infra.
    { code: 'GRADING_FAILED', phase: 'eval', round: 2, stopped: false, next: 'throw' },
    { code: 'SWEREX_HTTP', phase: 'eval', round: 2, stopped: false, next: 'throw' },
    { code: 'SANDBOX_START_FAILED', phase: 'eval', round: 2, stopped: false, next: 'throw' },
    { code: 'INTERNAL', phase: 'eval', round: 1, stopped: false, next: 'throw' },
  ] as const)('$code in $phase, round $round, stopped $stopped → $next', ({ code, phase, round, stopped, next }) => {
    expect(onGradingSandboxFailure(inPhase(code, phase), { round, stopped })).toBe(next);
  });

  it("outside grading (no phase) is never the patch's doing", () => {
    expect(onGradingSandboxFailure(new RolloutError('SANDBOX_DEAD', 'x'), { round: 2, stopped: false })).toBe('throw');
  });
});

describe('a step that kills its own sandbox', () => {
  const attempt = (n: number, lostAt?: number): Attempt => ({
    attempt: n,
    worker_id: 'w',
    sandbox_id: null,
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: '2026-01-01T00:00:01.000Z',
    failure: failure('SANDBOX_DEAD'),
    ...(lostAt === undefined ? {} : { lost_at_step: lostAt }),
  });

  it.each([
    { why: 'lost once is infra (retried)', lostAt: [3], n: 1, step: undefined },
    { why: 'lost at the same step every time', lostAt: [3, 3], n: 2, step: 3 },
    { why: 'step 0 counts', lostAt: [0, 0, 0], n: 3, step: 0 },
    { why: 'lost at different steps', lostAt: [3, 4], n: 2, step: undefined },
    { why: 'one attempt failed otherwise', lostAt: [undefined, 3], n: 2, step: undefined },
    { why: "only this job's attempts count (history before them does not)", lostAt: [5, 3, 3], n: 2, step: 3 },
    { why: 'a history attempt does not make up for a missing one', lostAt: [3, 3], n: 3, step: undefined },
  ])('$why', ({ lostAt, n, step }) => {
    expect(
      stepThatKillsItsSandbox(
        lostAt.map((at, i) => attempt(i + 1, at)),
        n,
      ),
    ).toBe(step);
  });
});

describe('the failure a graded result names', () => {
  const deadline = failure('EPISODE_DEADLINE');
  const extraction = failure('PATCH_EXTRACTION_FAILED');
  const sync = failure('SESSION_OUT_OF_SYNC');
  it.each([
    { steps: deadline, grading: extraction, sync, named: 'EPISODE_DEADLINE' },
    { steps: null, grading: extraction, sync, named: 'PATCH_EXTRACTION_FAILED' },
    { steps: null, grading: null, sync, named: 'SESSION_OUT_OF_SYNC' },
    { steps: null, grading: null, sync: null, named: null },
  ])('steps $steps.code, grading $grading.code, sync $sync.code → $named', ({ steps, grading, sync: s, named }) => {
    expect(failureOf({ steps, grading, sync: s })?.code ?? null).toBe(named);
  });
});

describe('an error that escapes the attempt', () => {
  it.each([
    { code: 'STEP_TIMEOUT', becomes: 'INTERNAL', class: 'infra' },
    { code: 'SWEREX_SESSION_ENDED', becomes: 'INTERNAL', class: 'infra' },
    { code: 'SANDBOX_DEAD', becomes: 'SANDBOX_DEAD', class: 'infra' },
    { code: 'INPUT_INVALID', becomes: 'INPUT_INVALID', class: 'input' },
  ] as const)('$code → $becomes ($class): a failed result is never class model', ({ code, becomes, class: cls }) => {
    const err = new RolloutError(code, 'x');
    const escaped = escapedError(err);
    expect({ code: escaped.code, class: escaped.class }).toEqual({ code: becomes, class: cls });
    if (code === becomes) expect(escaped).toBe(err);
    else expect(escaped.cause).toBe(err);
  });
});

describe('lostAfterModel (SANDBOX_LOST_AFTER_MODEL, docs/adversarial-grading.md "Never 0 for infra")', () => {
  it.each([
    ['with an eval: graded as no patch, reward for unresolved', SPEC, DEFAULTS, 0, false],
    ['configured rewards', SPEC, CONFIGURED, -0.5, false],
    ['without an eval: nothing to grade, null', undefined, DEFAULTS, null, null],
  ] as const)('%s', (_name, spec, rewards, reward, resolved) => {
    const verdict = lostAfterModel(spec, 'step, extract', rewards);
    expect(verdict).toMatchObject({ patch: null, reward, resolved, gradedIn: null });
    expect(verdict.failure).toMatchObject({ code: 'SANDBOX_LOST_AFTER_MODEL', class: 'model' });
  });
});
