/**
 * One attempt at one episode: sandbox → tools → replay or policy loop → patch → grade, with every sandbox
 * released on every path. Model-side trouble becomes observations (step-executor.ts) or is graded (a patch
 * that cannot be taken, a patch that kills its grading sandbox: grading/verdict.ts decides each verdict from the
 * evidence gathered here); infra trouble throws and the processor decides about retries. The attempt is bounded by `signal` (its hard bound, cancel, shutdown, lost lock); the model's
 * own time — the episode deadline — ends the steps, not the attempt.
 *
 * Grading (docs/adversarial-grading.md): the patch is taken outside the agent's shell (extract-patch.ts) and,
 * by default, graded in a fresh sandbox of the same image, acquired while the last steps run. Grading in the
 * agent's own sandbox (`freshEval: false`) is an explicit, unsafe opt-in.
 */
import {
  DEFAULT_REPO_DIR,
  RolloutError,
  coerceError,
  linkedAbort,
  type ChatMessage,
  type Episode,
  type Failure,
  type Fidelity,
  type LinkedAbort,
  type Logger,
  type Policy,
  type PolicyRunInfo,
  type StepRecord,
  type TokenTotals,
  type ToolName,
  type TurnRecord,
  sampleSeed,
} from '@rollout-fleet/shared';
import { PolicyClient } from '../policy-client/policy-client.js';
import { toolProfile } from '../policy/tool-profiles.js';
import type { AgentEnv } from '@rollout-fleet/sandbox';
import { extractPatch, probeRepository, type RepoBase } from '../grading/extract-patch.js';
import { gradeInSandbox, type SandboxGrade } from '../grading/grade-in-sandbox.js';
import { settleBeforeExtraction } from '../grading/settle-before-extraction.js';
import { stopModelProcesses } from '../grading/stop-model-processes.js';
import { isSandboxLoss, lossRecordOf, type LossPhase } from '../losses/loss-rule.js';
import {
  emptyPatch,
  evalSandboxLost,
  failureOf,
  graded as gradedVerdict,
  noPatchTaken,
  onGradingSandboxFailure,
  repositoryMissing,
  ungraded,
  type Rewards,
  type Verdict,
} from '../grading/verdict.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { judgeIntegrity } from '../integrity/judge-integrity.js';
import type { IntegrityMode } from '../integrity/integrity-verdict.js';
import type { SandboxRole, SandboxSupply, SuppliedSandbox } from '@rollout-fleet/sandbox';
import type { InflightLimiter } from '../policy/inflight-limiter.js';
import { createTurnRequester, type TurnRequester } from '../policy/turn-request.js';
import { exitStatusOf, runPolicyLoop, workingDirOf, type PolicyRun } from './policy-driver.js';
import { createFidelityObserver } from './fidelity-observer.js';
import { agentShell, recordedAgentFor } from './recorded-agent.js';
import { createOutputBudget, type OutputBudget } from './output-limit.js';
import { replayTrajectory } from './replay.js';
import { createStepExecutor, type StepShell } from './step-executor.js';

export interface AttemptDeps {
  /** The fleet's one door to sandboxes (rate, caps, warm pool, leases). */
  supply: SandboxSupply;
  metrics: WorkerMetrics;
  workerId: string;
  /** Each step output and the eval log kept whole up to this (RF_STEP_OUTPUT_LIMIT_BYTES). */
  outputLimitBytes: number;
  /**
   * What one episode keeps of step outputs and the eval log together (RF_EPISODE_OUTPUT_LIMIT_BYTES); the eval
   * log's `outputLimitBytes` is set aside first. @defaultValue no bound beyond `outputLimitBytes` per output
   */
  episodeOutputLimitBytes?: number;
  /** RF_ARTIFACTS_DIR: the attempt keeps its whole step outputs and eval log for the files (outcome.whole). */
  artifactsDir?: string | undefined;
  /** Grade in a fresh sandbox of the same image (the default). false = in the agent's sandbox: unsafe. */
  freshEval: boolean;
  reward: Rewards;
  /** RF_INTEGRITY: `strict` grades a `violated` finding unresolved; `flag` records it only. @defaultValue 'strict' */
  integrity?: IntegrityMode;
  /** What policy episodes need; without it a policy episode fails as a configuration error. */
  policy?: PolicyDeps;
}

export interface PolicyDeps {
  /** Fleet-wide inflight slots per endpoint (RF_POLICY_MAX_INFLIGHT). */
  limiter?: InflightLimiter;
  /** First back-off of a retried turn, ms (RF_POLICY_BACKOFF_MS). */
  backoffMs: number;
  /** The value of an environment variable named by `policy.api_key_env` (never logged, never stored). */
  secret: (name: string) => string | undefined;
}

/** What a policy episode adds to its result. */
export interface PolicyOutcome {
  exitStatus: string;
  turns: TurnRecord[];
  messages: ChatMessage[];
  tokens: TokenTotals;
  info: PolicyRunInfo;
}

/** The attempt's verdict (grading/verdict.ts) with what the attempt did on the way. */
export interface AttemptOutcome extends Verdict {
  steps: StepRecord[];
  sandboxId: string | null;
  timings: { sandboxAcquireMs: number; replayMs: number; gradeMs: number };
  /** Set for policy episodes. */
  policy?: PolicyOutcome;
  /** Replayed vs recorded observations; undefined when the episode replays nothing. */
  fidelity?: Fidelity;
  /** With `artifactsDir`: the whole step outputs (by index, masked) and the whole eval log (unmasked). */
  whole?: { steps: string[]; evalLog?: string };
}

export interface AttemptInput {
  episode: Episode;
  jobId: string;
  logger: Logger;
  signal: AbortSignal;
  /** Epoch ms the attempt must end by (an upper bound until `startDeadline` is called); sandbox lifetimes nest above it. */
  deadline: number;
  /**
   * Called once the attempt holds its sandbox: the clocks start here, so waiting for a sandbox (fleet create
   * rate, caps, 429 back-off) never eats into them. Returns the attempt's hard bound (epoch ms, the new
   * `deadline`) and the episode deadline — the model's time: no step starts after it.
   */
  startDeadline?: () => { deadline: number; episodeDeadline: number };
  onStep?: (step: StepRecord, total: number) => Promise<void>;
  /** Policy episodes: called after each model turn with the steps it executed (instead of onStep). */
  onTurn?: (turn: TurnRecord, steps: StepRecord[], maxTurns: number) => Promise<void>;
  /** Reports the sandbox id as soon as it exists (logs, attempt records); `backup` for a straggler's backup. */
  onSandbox?: (sandboxId: string, backup: boolean) => void;
  /** The role of the attempt's main sandbox: `backup` when this attempt backs up a straggler. @defaultValue 'main' */
  role?: 'main' | 'backup';
  /**
   * Masks the episode's secrets in every observation at the step executor, so the model, fidelity, job logs and
   * the result only ever see SECRET_MASK (the processor builds it once per job). Absent: the episode has none.
   */
  mask?: ((text: string) => string) | undefined;
}

/** The repository inside the sandbox (fidelity's `repo_dir`, default /testbed). */
function repoDirOf(episode: Episode): string {
  return episode.repo_dir || DEFAULT_REPO_DIR;
}

export async function runAttempt(deps: AttemptDeps, input: AttemptInput): Promise<AttemptOutcome> {
  const { episode } = input;
  const timings = { sandboxAcquireMs: 0, replayMs: 0, gradeMs: 0 };
  // A lost lease stops the attempt like a cancel does: the sandbox may be reaped under us.
  const lost = linkedAbort([input.signal]);
  input = { ...input, signal: lost.signal };
  // A policy episode needs its endpoint's key before any sandbox is spent on it.
  const requester = episode.policy ? turnRequesterFor(deps, episode.policy, input.logger) : undefined;
  const acquired = performance.now();
  const main = await openEnv(deps, input, input.role ?? 'main', lost).catch((err: unknown) => {
    lost.dispose();
    // Lost while it started (its first session included): nothing of the model's ran — the platform's evidence.
    if (err instanceof RolloutError && startLoss(err))
      Object.assign(err.details, { loss: { lost_after_model: false, lost_in: 'setup' } });
    throw err;
  });
  let evalBox: EvalSandbox | undefined;
  // Where a loss of the agent's sandbox would happen, and whether model commands ran before (losses/loss-rule.ts).
  let lossPhase: LossPhase | 'grade' = 'setup';
  let stepsRun = 0;
  try {
    input.onSandbox?.(main.sandboxId, input.role === 'backup');
    timings.sandboxAcquireMs = performance.now() - acquired;
    let episodeDeadline = Date.now() + episode.limits.episode_deadline_s * 1000;
    if (input.startDeadline) {
      const clocks = input.startDeadline();
      input = { ...input, deadline: clocks.deadline };
      episodeDeadline = clocks.episodeDeadline;
      main.extendDeadline(input.deadline);
    }
    const repoDir = repoDirOf(episode);
    const base = await probeRepository(main.env, repoDir);

    const freshGrading = needsFreshSandbox(deps, episode);
    // A trajectory this short ends before a sandbox could start: acquire the grading sandbox right away.
    if (freshGrading && !episode.policy && episode.trajectory.length <= 2)
      evalBox = startEvalSandbox(deps, input, lost);
    const countStep = (step: StepRecord): void => {
      stepsRun += 1;
      deps.metrics.perStep.step(step.tool, step.duration_ms / 1000);
    };
    // The session starts in the repository, with the recording agent's tools when the episode names them.
    const agent = recordedAgentFor(episode);
    await agent.prepare(main.env);
    // After the model breaks its shell, the new session is set up again the same way (recorded-agent.ts).
    const shell = agentShell(main.env, agent);
    const fidelity = createFidelityObserver({
      trajectory: episode.trajectory,
      agent,
      session: main.env,
      // Recorded vs replayed text per step: a comparison aid, kept at the size it always had.
      keepChars: Math.min(deps.outputLimitBytes, FIDELITY_KEEP_CHARS),
      mask: input.mask,
    });
    const whole: { steps: string[]; evalLog?: string } | undefined = deps.artifactsDir ? { steps: [] } : undefined;
    const onOutput = whole
      ? (index: number, output: string): void => {
          whole.steps[index] = output;
        }
      : undefined;
    const budget =
      deps.episodeOutputLimitBytes === undefined
        ? undefined
        : createOutputBudget({
            perOutputBytes: deps.outputLimitBytes,
            stepsBytes: deps.episodeOutputLimitBytes - deps.outputLimitBytes,
          });
    const replayStarted = performance.now();
    lossPhase = 'step';
    let steps: StepRecord[];
    let stopped: Failure | null = null;
    let run: PolicyRun | undefined;
    if (episode.policy && requester) {
      run = await drivePolicy(deps, input, {
        shell,
        policy: samplePolicy(episode, episode.policy),
        requester,
        countStep,
        deadline: episodeDeadline,
        budget,
        onOutput,
      });
      steps = run.steps;
      stopped = run.stopped;
    } else {
      const replay = await replayTrajectory({
        shell,
        trajectory: episode.trajectory,
        stepTimeoutS: episode.limits.step_timeout_s,
        outputLimitBytes: deps.outputLimitBytes,
        budget,
        onOutput,
        toCommand: agent.toCommand,
        mask: input.mask,
        signal: input.signal,
        deadline: episodeDeadline,
        onStep: async (step, total, output) => {
          const call = episode.trajectory[step.index];
          if (call !== undefined) await agent.afterStep(main.env, call);
          const verdict = await fidelity.observe(step, output);
          deps.metrics.perStep.fidelity(verdict.verdict);
          countStep(step);
          // Acquire the grading sandbox while the last steps run, so its start-up hides behind them.
          if (
            freshGrading &&
            !evalBox &&
            prefetchNow(step.index + 1, total, performance.now() - replayStarted, timings.sandboxAcquireMs)
          ) {
            evalBox = startEvalSandbox(deps, input, lost);
          }
          await input.onStep?.(step, total);
        },
      });
      steps = replay.steps;
      stopped = replay.stopped;
    }
    timings.replayMs = performance.now() - replayStarted;

    const gradeStarted = performance.now();
    lossPhase = 'settle';
    // The patch must reflect every command the steps sent: the shell may still be catching up with them.
    const outOfSync =
      episode.model_patch === undefined && base !== null
        ? await settleBeforeExtraction(main.env, { stepTimeoutS: episode.limits.step_timeout_s, logger: input.logger })
        : null;
    const graded = await grade(deps, input, {
      main,
      repoDir,
      base,
      takeEvalBox: () => evalBox ?? startEvalSandbox(deps, input, lost),
      newEvalBox: () => startEvalSandbox(deps, input, lost),
      phase: (p) => {
        lossPhase = p;
      },
      onEvalLog: (log) => {
        if (whole) whole.evalLog = log;
      },
    });
    timings.gradeMs = performance.now() - gradeStarted;
    const policy =
      run && episode.policy ? policyOutcome(samplePolicy(episode, episode.policy), run, graded.patch) : undefined;
    const replayed = run === undefined && episode.trajectory.length > 0;
    return {
      steps,
      ...graded,
      failure: failureOf({ steps: stopped, grading: graded.failure, sync: outOfSync }),
      sandboxId: main.sandboxId,
      timings,
      ...(policy ? { policy } : {}),
      ...(replayed ? { fidelity: fidelity.result() } : {}),
      ...(whole ? { whole } : {}),
    };
  } catch (thrown) {
    // A lost agent sandbox says where and after what; the processor decides whose it was (losses/model-loss.ts).
    if (thrown instanceof RolloutError) {
      const loss = lossRecordOf(thrown, { phase: lossPhase, stepsRun });
      if (loss !== undefined) Object.assign(thrown.details, { loss });
    }
    throw thrown;
  } finally {
    await main.release();
    // A grading sandbox nobody used (empty patch, the attempt failed): stop its acquisition — a start that
    // hangs must not hold the attempt — and kill it; release() is idempotent.
    if (evalBox) {
      const box = evalBox as EvalSandbox;
      box.control.abort(new RolloutError('INTERNAL', 'the grading sandbox is not needed'));
      await box.box.then(
        (b) => b.release(),
        () => undefined,
      );
      box.control.dispose();
    }
    lost.dispose();
  }
}

/** A sandbox that died or never came up while it started (not a refused image or a quota). */
function startLoss(err: RolloutError): boolean {
  return isSandboxLoss(err) || err.code === 'SANDBOX_START_FAILED' || err.code === 'SANDBOX_START_TIMEOUT';
}

/** A grading sandbox on its way from the supply; `control` stops its acquisition when it is not needed. */
interface EvalSandbox {
  box: Promise<SuppliedSandbox>;
  control: LinkedAbort;
}

function startEvalSandbox(deps: AttemptDeps, input: AttemptInput, lost: LinkedAbort): EvalSandbox {
  const control = linkedAbort([input.signal]);
  const box = openEnv(deps, { ...input, signal: control.signal }, 'eval', lost);
  // Awaited when grading starts; until then a failure must not become an unhandled rejection.
  box.catch(() => undefined);
  return { box, control };
}

/** How much of each recorded and replayed observation the fidelity comparison keeps, characters. */
const FIDELITY_KEEP_CHARS = 64 * 1024;

/** Whether this episode's grade needs a second sandbox: a patch from executed steps, graded fresh. */
function needsFreshSandbox(deps: AttemptDeps, episode: Episode): boolean {
  if (!episode.eval) return false;
  if (episode.model_patch !== undefined) return episode.trajectory.length > 0 || episode.policy !== undefined;
  return deps.freshEval;
}

/**
 * Prefetch rule: once the steps still to run are expected to take no longer than a sandbox start (this
 * attempt's own acquire time), or at the last step.
 */
export function prefetchNow(done: number, total: number, elapsedMs: number, startupMs: number): boolean {
  const remaining = total - done;
  if (remaining <= 1) return true;
  return remaining * (elapsedMs / Math.max(1, done)) <= startupMs;
}

/** The policy driver over this sandbox's step executor, with the profile's own tool-call conversion. */
async function drivePolicy(
  deps: AttemptDeps,
  input: AttemptInput,
  o: {
    shell: StepShell;
    policy: Policy;
    requester: TurnRequester;
    countStep: (step: StepRecord) => void;
    deadline: number;
    budget: OutputBudget | undefined;
    onOutput: ((index: number, output: string) => void) | undefined;
  },
): Promise<PolicyRun> {
  const { episode } = input;
  const profile = toolProfile(o.policy.tool_profile);
  const workingDir = workingDirOf(episode);
  const maxTurns = o.policy.limits.max_turns;
  const stepsSoFar: StepRecord[] = [];
  return runPolicyLoop({
    episode: { ...episode, policy: o.policy },
    execute: createStepExecutor({
      shell: o.shell,
      toCommand: (call) => profile.toCommand(call, { workingDir }),
      stepTimeoutS: episode.limits.step_timeout_s,
      outputLimitBytes: deps.outputLimitBytes,
      budget: o.budget,
      onOutput: o.onOutput,
      mask: input.mask,
    }),
    requestTurn: o.requester,
    signal: input.signal,
    deadline: o.deadline,
    onStep: (step) => {
      stepsSoFar.push(step);
      o.countStep(step);
    },
    onTurn: (turn) =>
      input.onTurn?.(
        turn,
        turn.steps.map((i) => stepsSoFar[i]!),
        maxTurns,
      ),
  });
}

/** The bundle's executables a sandbox needs: the episode's own, and those of its policy's tool profile. */
function toolsFor(episode: Episode): ToolName[] {
  // SWE-agent's tools travel in the same bundle upload, which happens only when some tool is asked for.
  if (episode.tool_bundle?.name === 'swe-agent' && episode.tools.length === 0) return ['str_replace_editor'];
  if (!episode.policy) return episode.tools;
  return [...new Set([...episode.tools, ...toolProfile(episode.policy.tool_profile).executables])];
}

function turnRequesterFor(deps: AttemptDeps, policy: Policy, logger: Logger): TurnRequester {
  if (!deps.policy) throw new RolloutError('INTERNAL', 'this worker was started without policy support');
  let apiKey: string | undefined;
  if (policy.api_key_env !== undefined) {
    apiKey = deps.policy.secret(policy.api_key_env);
    if (apiKey === undefined || apiKey === '') {
      throw new RolloutError(
        'POLICY_KEY_MISSING',
        `policy.api_key_env names ${policy.api_key_env}, which is not set in this worker's environment (worker ${deps.workerId})`,
      );
    }
  }
  return createTurnRequester({
    client: new PolicyClient({ baseUrl: policy.base_url, apiKey }),
    baseUrl: policy.base_url,
    ...(deps.policy.limiter ? { limiter: deps.policy.limiter } : {}),
    retries: policy.limits.retries,
    requestTimeoutMs: policy.limits.request_timeout_s * 1000,
    minBackoffMs: deps.policy.backoffMs,
    metrics: deps.metrics.policy,
    logger,
  });
}

/** The episode's policy as this sample sends it: its own seed, derived from the base seed (docs/policy.md, "Seeds"). */
function samplePolicy(episode: Episode, policy: Policy): Policy {
  if (policy.sampling.seed === undefined) return policy;
  const seed = sampleSeed(policy.sampling.seed, episode.episode_id, episode.sample_index);
  return { ...policy, sampling: { ...policy.sampling, seed } };
}

function policyOutcome(policy: Policy, run: PolicyRun, patch: string | null): PolicyOutcome {
  return {
    exitStatus: exitStatusOf(run.exit, patch),
    turns: run.turns,
    messages: run.messages,
    tokens: run.tokens,
    info: {
      base_url: policy.base_url,
      model: policy.model,
      server_kind: policy.server_kind,
      tool_profile: policy.tool_profile,
      ...(policy.sampling.seed !== undefined ? { seed: policy.sampling.seed } : {}),
      tools: toolProfile(policy.tool_profile).tools.map(
        (tool) => structuredClone(tool) as unknown as Record<string, unknown>,
      ),
    },
  };
}

/** Gathers the evidence of the attempt's grade (the patch, the graded tests) and asks grading/verdict.ts for the verdict. */
async function grade(
  deps: AttemptDeps,
  input: AttemptInput,
  o: {
    main: SuppliedSandbox;
    repoDir: string;
    base: RepoBase | null;
    takeEvalBox: () => EvalSandbox;
    newEvalBox: () => EvalSandbox;
    /** Where the attempt is, for a loss of the agent's sandbox. */
    phase: (p: LossPhase | 'grade') => void;
    /** Gets the whole eval log of the grade that is returned. */
    onEvalLog?: (log: string) => void;
  },
): Promise<Verdict> {
  const { episode } = input;
  const given = episode.model_patch;
  let patch: string | null = null;
  let failure: Failure | null = null;
  if (given !== undefined) patch = given;
  else if (o.base !== null) {
    o.phase('extract');
    // Nothing the model left running may act while the patch is taken (or graded in place).
    await stopModelProcesses(o.main.env, input.logger);
    const extracted = await extractPatch(o.main.env, { repoDir: o.repoDir, base: o.base });
    if (extracted.ok) patch = extracted.patch;
    else failure = extracted.failure;
  } else if (episode.eval) {
    throw repositoryMissing(o.repoDir);
  }
  o.phase('grade');
  const spec = episode.eval;
  if (!spec) return ungraded(patch, failure);
  if (failure) return noPatchTaken(spec, failure, deps.reward);
  const run = (env: AgentEnv, mode: 'in-place' | 'apply'): Promise<SandboxGrade> =>
    gradeInSandbox({
      shell: env,
      instanceId: episode.instance_id,
      eval: spec,
      mode,
      patch,
      repoDir: o.repoDir,
      logLimitBytes: deps.outputLimitBytes,
    });
  const outcome = (g: SandboxGrade, gradedIn: 'fresh' | 'in-place'): Verdict => {
    o.onEvalLog?.(g.log);
    return gradedVerdict(judgeIntegrity(g, deps.integrity ?? 'strict'), gradedIn, deps.reward);
  };
  if (given !== undefined && !needsFreshSandbox(deps, episode)) return outcome(await run(o.main.env, 'apply'), 'fresh');
  if (!needsFreshSandbox(deps, episode)) return outcome(await run(o.main.env, 'in-place'), 'in-place');
  // Nothing more is needed from the agent's sandbox: release it now (its kill runs while grading goes on; the
  // attempt's own clean-up awaits it).
  void o.main.release().catch(() => undefined);
  if (patch === null || patch.trim() === '') return emptyPatch(spec, patch, deps.reward);
  for (let round = 1; ; round += 1) {
    const pending = round === 1 ? o.takeEvalBox() : o.newEvalBox();
    let box: SuppliedSandbox | undefined;
    try {
      box = await pending.box;
      return outcome(await run(box.env, 'apply'), 'fresh');
    } catch (thrown) {
      const err = coerceError(thrown);
      const next = onGradingSandboxFailure(err, { round, stopped: input.signal.aborted });
      if (next === 'throw') throw err;
      input.logger.warn({ err, round }, 'grading sandbox died while the tests ran');
      if (next === 'eval-sandbox-lost') return evalSandboxLost(spec, { patch, cause: err }, deps.reward);
    } finally {
      await box?.release();
    }
  }
}

/**
 * A started sandbox with the episode's tools, from the fleet's supply: leased from creation to kill, with
 * heartbeat and lifetime guard. A lost lease aborts the attempt through `lost` (the sandbox may be reaped).
 */
export async function openEnv(
  deps: AttemptDeps,
  input: AttemptInput,
  role: SandboxRole,
  lost: Pick<AbortController, 'abort'>,
): Promise<SuppliedSandbox> {
  const { episode, logger } = input;
  return deps.supply.acquire({
    sandbox: episode.sandbox,
    // A grading sandbox runs no tool calls.
    tools: role === 'eval' ? [] : toolsFor(episode),
    role,
    runId: episode.run_id,
    jobId: input.jobId,
    deadline: input.deadline,
    signal: input.signal,
    logger,
    defaultTimeoutS: episode.limits.step_timeout_s,
    onLost: (err) => lost.abort(err),
  });
}
