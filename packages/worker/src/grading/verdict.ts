/**
 * Every rule that turns what an attempt found out (its evidence) into the episode's verdict: resolved,
 * unresolved, graded 0 with a model-caused reason, ungraded (null), or thrown (infra: the processor retries the
 * job, and a failure that persists is a failed result with reward null). One rule decides them all
 * (docs/adversarial-grading.md): whatever the model can cause is graded (0 or 1, never null); whatever our
 * infrastructure causes is retried (null if it persists, never 0).
 *
 * Who does what: run-attempt.ts gathers the evidence (the patch, the grade of the tests, a grading sandbox that
 * died) and asks here; the processor asks here about attempts that all lost their sandbox, and otherwise only maps
 * an attempt's outcome to the job's fate (complete, retry, fail). The SWE-bench report itself (which tests passed,
 * `resolved`) is grade-instance.ts and resolution.ts.
 */
import {
  RolloutError,
  toFailure,
  type Attempt,
  type EvalSpec,
  type Failure,
  type GradingDetails,
  type GradingReport,
} from '@rollout-fleet/shared';
import { emptyPatchGrade, gradingPhaseOf, type SandboxGrade } from './grade-in-sandbox.js';
import { untestedDetails } from './grading-details.js';

/** The verdict fields of an attempt's outcome, as the result stores them. */
export interface Verdict {
  /** The graded patch; null = no prediction. */
  patch: string | null;
  report: GradingReport | null;
  resolved: boolean | null;
  reward: number | null;
  /** A model-caused problem the episode was graded with (deadline, broken shell or repository, grader killed). */
  failure: Failure | null;
  /** Where the eval ran; null when nothing was graded. */
  gradedIn: 'fresh' | 'in-place' | null;
  /** How the grade was reached (parser, tests parsed, per-test status, eval log); set whenever `report` is. */
  grading?: GradingDetails;
}

/** RF_REWARD_RESOLVED and RF_REWARD_UNRESOLVED. */
export interface Rewards {
  resolved: number;
  unresolved: number;
}

/** The eval spec fields a verdict's `grading` block needs. */
type Spec = Pick<EvalSpec, 'repo' | 'log_parser' | 'FAIL_TO_PASS' | 'PASS_TO_PASS' | 'timeout_s'>;

/** The reward of a graded episode: configured, never null — null is kept for what was not graded. */
export function rewardFor(resolved: boolean, rewards: Rewards): number {
  return resolved ? rewards.resolved : rewards.unresolved;
}

/** SWE-bench's report of a prediction without a patch (`model_patch: None`): nothing applied, not resolved. */
function noPatchReport(): GradingReport {
  return { patch_is_None: true, patch_exists: false, patch_successfully_applied: false, resolved: false };
}

/** No eval spec: the episode is a rollout only, nothing is graded (reward null); an extraction failure is kept. */
export function ungraded(patch: string | null, failure: Failure | null): Verdict {
  return { patch, report: null, resolved: null, reward: null, failure, gradedIn: null };
}

/** An eval but no git repository to take the patch from: the episode's image is wrong (input, never retried). */
export function repositoryMissing(repoDir: string): RolloutError {
  const message = `the episode has an eval spec but its image has no git repository at ${repoDir}`;
  return new RolloutError('INPUT_INVALID', message);
}

/**
 * The tests ran (or SWE-bench's rules graded the patch without running them: not applied, no test output):
 * the report decides. `gradedIn` null for an empty patch, graded without any sandbox.
 */
export function graded(grade: SandboxGrade, gradedIn: Verdict['gradedIn'], rewards: Rewards): Verdict {
  return {
    patch: grade.patch,
    report: grade.report,
    resolved: grade.report.resolved,
    reward: rewardFor(grade.report.resolved, rewards),
    failure: null,
    gradedIn,
    grading: grade.details,
  };
}

/** An empty or null patch runs no tests (SWE-bench does not run empty predictions): unresolved, no sandbox used. */
export function emptyPatch(spec: EvalSpec, patch: string | null, rewards: Rewards): Verdict {
  return graded(emptyPatchGrade(spec, patch), null, rewards);
}

/**
 * The model left a repository no patch can be taken from (PATCH_EXTRACTION_FAILED, class model): graded as no
 * prediction (SWE-bench: patch None), reward for unresolved — breaking the extraction must not buy a retry.
 */
export function noPatchTaken(spec: Spec, failure: Failure, rewards: Rewards): Verdict {
  const grading = untestedDetails(spec, `no patch could be taken from the repository (${failure.code})`);
  const reward = rewardFor(false, rewards);
  return { patch: null, report: noPatchReport(), resolved: false, reward, failure, gradedIn: null, grading };
}

/** Transport answers that mean the sandbox (not one request) stopped answering. */
export const SANDBOX_LOSS: ReadonlySet<string> = new Set([
  'SANDBOX_DEAD',
  'SWEREX_NETWORK',
  'SWEREX_TIMEOUT',
  'GATEWAY_ERROR',
]);

/**
 * What a failure of the grading sandbox means: thrown as it is (infra: retried with the whole attempt) unless the
 * sandbox itself was lost while the patch's tests ran — then it is graded again in a second fresh sandbox, and a
 * second such loss is the patch's doing (`eval-sandbox-lost`).
 */
export function onGradingSandboxFailure(
  err: RolloutError,
  o: { round: number; stopped: boolean },
): 'throw' | 'grade-again' | 'eval-sandbox-lost' {
  // The attempt was stopped (cancel, shutdown, lost lock or lease, hard bound): its own reason decides.
  if (o.stopped) return 'throw';
  // Not a lost sandbox (a server error, GRADING_FAILED): thrown as it is, its code's class decides.
  if (!SANDBOX_LOSS.has(err.code)) return 'throw';
  // The patch's own code runs only in the eval phase: a sandbox lost in set-up or apply was lost to us.
  if (gradingPhaseOf(err) !== 'eval') return 'throw';
  // Once could be the platform; twice during the same patch's tests is the patch, as far as anyone can tell.
  return o.round >= 2 ? 'eval-sandbox-lost' : 'grade-again';
}

/**
 * The grading sandbox died twice while the patch's tests ran (EVAL_SANDBOX_LOST, class model): unresolved, as
 * SWE-bench counts a crashed instance — a patch that kills its grader must not turn its 0 into a retried null.
 */
export function evalSandboxLost(
  spec: Spec,
  o: { patch: string | null; cause: RolloutError },
  rewards: Rewards,
): Verdict {
  const { patch } = o;
  const report = { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: false };
  const message = `the grading sandbox died twice while the tests ran: ${o.cause.message}`;
  const failure = toFailure(new RolloutError('EVAL_SANDBOX_LOST', message));
  const grading = untestedDetails(spec, 'the grading sandbox died twice while the tests ran (EVAL_SANDBOX_LOST)');
  const reward = rewardFor(false, rewards);
  return { patch, report, resolved: false, reward, failure, gradedIn: 'fresh', grading };
}

/**
 * The step index at which every one of the job's last `n` (≥ 2) attempts lost its sandbox, if there is one:
 * lost once is infra (retried); lost during the same step every time is the step's doing.
 */
export function stepThatKillsItsSandbox(attempts: readonly Attempt[], n: number): number | undefined {
  if (n < 2 || attempts.length < n) return undefined;
  const steps = attempts.slice(-n).map((a) => a.lost_at_step);
  const first = steps[0];
  return first !== undefined && steps.every((s) => s === first) ? first : undefined;
}

/**
 * A step that kills its own sandbox in every attempt (SANDBOX_LOST_IN_STEP, class model): graded as no patch,
 * reward for unresolved when there is an eval (null when there is none) — killing the sandbox must not buy a null.
 */
export function lostInStep(spec: Spec | undefined, step: number, rewards: Rewards): Verdict {
  const message = `the sandbox died during step ${step} in every attempt`;
  const failure = toFailure(new RolloutError('SANDBOX_LOST_IN_STEP', message));
  if (spec === undefined) return { patch: null, report: null, resolved: null, reward: null, failure, gradedIn: null };
  const grading = untestedDetails(spec, `the sandbox died during step ${step} in every attempt, leaving no patch`);
  const reward = rewardFor(false, rewards);
  return { patch: null, report: noPatchReport(), grading, resolved: false, reward, failure, gradedIn: null };
}

/**
 * The agent's sandbox (or its session) was lost after the model's commands ran in every attempt, with no sign of
 * the platform's doing (SANDBOX_LOST_AFTER_MODEL, class model; losses/loss-rule.ts decides): graded as no patch,
 * reward for unresolved when there is an eval (null when there is none) — as lostInStep, at any step or phase.
 */
export function lostAfterModel(spec: Spec | undefined, where: string, rewards: Rewards): Verdict {
  const message = `the sandbox was lost after the model's commands ran, in every attempt (${where})`;
  const failure = toFailure(new RolloutError('SANDBOX_LOST_AFTER_MODEL', message));
  if (spec === undefined) return { patch: null, report: null, resolved: null, reward: null, failure, gradedIn: null };
  const grading = untestedDetails(spec, `${message}, leaving no patch`);
  const reward = rewardFor(false, rewards);
  return { patch: null, report: noPatchReport(), grading, resolved: false, reward, failure, gradedIn: null };
}

/**
 * The model-caused problem a graded result names: why the steps stopped (deadline, no shell), else why grading
 * came out as it did (no patch, grader lost), else a shell that never caught up before the patch was taken.
 */
export function failureOf(o: { steps: Failure | null; grading: Failure | null; sync: Failure | null }): Failure | null {
  return o.steps ?? o.grading ?? o.sync;
}

/** Model-caused trouble is an observation or graded inside the attempt; one that escapes it is our bug (infra). */
export function escapedError(err: RolloutError): RolloutError {
  if (err.class !== 'model') return err;
  return new RolloutError('INTERNAL', `a model-side error escaped the attempt: ${err.message}`, { cause: err });
}
