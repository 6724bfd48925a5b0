/**
 * One attempt at one episode: sandbox → tools → replay → grade, with the sandbox closed on every path.
 * Model-side trouble becomes observations (replay.ts); infra trouble throws and the processor decides
 * about retries. The attempt is bounded by the episode deadline and by `signal` (cancel, shutdown).
 */
import {
  PolicyClient,
  RolloutError,
  toolProfile,
  type AgentEnv,
  type ChatMessage,
  type Episode,
  type Fidelity,
  type GradingReport,
  type Logger,
  type Policy,
  type PolicyRunInfo,
  type StepRecord,
  type TokenTotals,
  type ToolName,
  type TurnRecord,
} from '@rollout-fleet/shared';
import { diffWorkingTree, gradeInSandbox } from '../grading/grade-in-sandbox.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import type { SandboxRole, SandboxSupply, SuppliedSandbox } from '../supply/sandbox-supply.js';
import type { InflightLimiter } from '../policy/inflight-limiter.js';
import { createTurnRequester, type TurnRequester } from '../policy/turn-request.js';
import { exitStatusOf, runPolicyLoop, workingDirOf, type PolicyRun } from './policy-driver.js';
import { createFidelityObserver } from './fidelity-observer.js';
import { recordedAgentFor } from './recorded-agent.js';
import { replayTrajectory } from './replay.js';
import { createStepExecutor } from './step-executor.js';

export interface AttemptDeps {
  /** The fleet's one door to sandboxes (rate, caps, warm pool, leases). */
  supply: SandboxSupply;
  metrics: WorkerMetrics;
  workerId: string;
  outputLimitBytes: number;
  freshEval: boolean;
  reward: { resolved: number; unresolved: number };
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

export interface AttemptOutcome {
  steps: StepRecord[];
  patch: string | null;
  report: GradingReport | null;
  resolved: boolean | null;
  reward: number | null;
  sandboxId: string | null;
  timings: { sandboxAcquireMs: number; replayMs: number; gradeMs: number };
  /** Set for policy episodes. */
  policy?: PolicyOutcome;
  /** Replayed vs recorded observations; undefined when the episode replays nothing. */
  fidelity?: Fidelity;
}

export interface AttemptInput {
  episode: Episode;
  jobId: string;
  logger: Logger;
  signal: AbortSignal;
  /** Epoch ms the attempt must end by (an upper bound until `startDeadline` is called). */
  deadline: number;
  /**
   * Called once the attempt holds its sandbox: the episode deadline counts from here, so waiting for a sandbox
   * (fleet create rate, caps, 429 back-off) never eats into it. Returns the deadline (epoch ms).
   */
  startDeadline?: () => number;
  onStep?: (step: StepRecord, total: number) => Promise<void>;
  /** Policy episodes: called after each model turn with the steps it executed (instead of onStep). */
  onTurn?: (turn: TurnRecord, steps: StepRecord[], maxTurns: number) => Promise<void>;
  /** Reports the sandbox id as soon as it exists (logs, attempt records); `backup` for a straggler's backup. */
  onSandbox?: (sandboxId: string, backup: boolean) => void;
  /** The role of the attempt's main sandbox: `backup` when this attempt backs up a straggler. @defaultValue 'main' */
  role?: 'main' | 'backup';
}

export async function runAttempt(deps: AttemptDeps, input: AttemptInput): Promise<AttemptOutcome> {
  const { episode } = input;
  const timings = { sandboxAcquireMs: 0, replayMs: 0, gradeMs: 0 };
  // A lost lease stops the attempt like a cancel does: the sandbox may be reaped under us.
  const lost = new AbortController();
  input = { ...input, signal: AbortSignal.any([input.signal, lost.signal]) };
  // A policy episode needs its endpoint's key before any sandbox is spent on it.
  const requester = episode.policy ? turnRequesterFor(deps, episode.policy, input.logger) : undefined;
  const acquired = performance.now();
  const main = await openEnv(deps, input, input.role ?? 'main', lost);
  try {
    input.onSandbox?.(main.sandboxId, input.role === 'backup');
    timings.sandboxAcquireMs = performance.now() - acquired;
    if (input.startDeadline) {
      input = { ...input, deadline: input.startDeadline() };
      main.extendDeadline(input.deadline);
    }

    const countStep = (step: StepRecord): void => {
      deps.metrics.steps.inc({ tool: step.tool });
      deps.metrics.stepSeconds.observe({ tool: step.tool }, step.duration_ms / 1000);
    };
    // The session starts in the repository, with the recording agent's tools when the episode names them.
    const agent = recordedAgentFor(episode);
    await agent.prepare(main.env);
    const fidelity = createFidelityObserver({ trajectory: episode.trajectory, agent, session: main.env, keepChars: deps.outputLimitBytes });
    const replayStarted = performance.now();
    let steps: StepRecord[];
    let run: PolicyRun | undefined;
    if (episode.policy && requester) {
      run = await drivePolicy(deps, input, { env: main.env, policy: episode.policy, requester, countStep });
      steps = run.steps;
    } else {
      steps = await replayTrajectory({
        shell: main.env,
        trajectory: episode.trajectory,
        stepTimeoutS: episode.limits.step_timeout_s,
        outputLimitBytes: deps.outputLimitBytes,
        toCommand: agent.toCommand,
        signal: input.signal,
        onStep: async (step, total, output) => {
          const call = episode.trajectory[step.index];
          if (call !== undefined) await agent.afterStep(main.env, call);
          const verdict = await fidelity.observe(step, output);
          deps.metrics.fidelitySteps.inc({ verdict: verdict.verdict });
          countStep(step);
          await input.onStep?.(step, total);
        },
      });
    }
    timings.replayMs = performance.now() - replayStarted;

    const gradeStarted = performance.now();
    const graded = await grade(deps, input, main.env);
    timings.gradeMs = performance.now() - gradeStarted;
    const policy = run && episode.policy ? policyOutcome(episode.policy, run, graded.patch) : undefined;
    const replayed = run === undefined && episode.trajectory.length > 0;
    return { steps, ...graded, sandboxId: main.sandboxId, timings, ...(policy ? { policy } : {}), ...(replayed ? { fidelity: fidelity.result() } : {}) };
  } finally {
    await main.release();
  }
}

/** The policy driver over this sandbox's step executor, with the profile's own tool-call conversion. */
async function drivePolicy(
  deps: AttemptDeps,
  input: AttemptInput,
  o: { env: AgentEnv; policy: Policy; requester: TurnRequester; countStep: (step: StepRecord) => void },
): Promise<PolicyRun> {
  const { episode } = input;
  const profile = toolProfile(o.policy.tool_profile);
  const workingDir = workingDirOf(episode);
  const maxTurns = o.policy.limits.max_turns;
  const stepsSoFar: StepRecord[] = [];
  return runPolicyLoop({
    episode: { ...episode, policy: o.policy },
    execute: createStepExecutor({
      shell: o.env,
      toCommand: (call) => profile.toCommand(call, { workingDir }),
      stepTimeoutS: episode.limits.step_timeout_s,
      outputLimitBytes: deps.outputLimitBytes,
    }),
    requestTurn: o.requester,
    signal: input.signal,
    onStep: (step) => {
      stepsSoFar.push(step);
      o.countStep(step);
    },
    onTurn: (turn) => input.onTurn?.(turn, turn.steps.map((i) => stepsSoFar[i]!), maxTurns),
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
      throw new RolloutError('POLICY_KEY_MISSING', `policy.api_key_env names ${policy.api_key_env}, which is not set in this worker's environment (worker ${deps.workerId})`);
    }
  }
  return createTurnRequester({
    client: new PolicyClient({ baseUrl: policy.base_url, apiKey }),
    baseUrl: policy.base_url,
    ...(deps.policy.limiter ? { limiter: deps.policy.limiter } : {}),
    retries: policy.limits.retries,
    requestTimeoutMs: policy.limits.request_timeout_s * 1000,
    minBackoffMs: deps.policy.backoffMs,
    logger,
  });
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
      tools: toolProfile(policy.tool_profile).tools.map((tool) => structuredClone(tool) as unknown as Record<string, unknown>),
    },
  };
}

async function grade(
  deps: AttemptDeps,
  input: AttemptInput,
  env: AgentEnv,
): Promise<Pick<AttemptOutcome, 'patch' | 'report' | 'resolved' | 'reward'>> {
  const { episode } = input;
  const given = episode.model_patch;
  if (!episode.eval) {
    const patch = given !== undefined ? given : await diffWorkingTree(env).catch(() => null);
    return { patch, report: null, resolved: null, reward: null };
  }
  // A given patch is graded on a clean checkout: in this sandbox when nothing was replayed, else in a new one.
  const patch = given !== undefined ? given : await diffWorkingTree(env);
  const fresh = deps.freshEval || (given !== undefined && episode.trajectory.length > 0);
  const mode = fresh || given !== undefined ? 'apply' : 'in-place';
  const run = async (shell: AgentEnv) =>
    gradeInSandbox({ shell, instanceId: episode.instance_id, eval: episode.eval!, mode, patch });
  let grade;
  if (fresh && patch !== null && patch.trim() !== '') {
    const evalEnv = await openEnv(deps, input, 'eval', new AbortController());
    try {
      grade = await run(evalEnv.env);
    } finally {
      await evalEnv.release();
    }
  } else {
    grade = await run(env);
  }
  const resolved = grade.report.resolved;
  return { patch, report: grade.report, resolved, reward: resolved ? deps.reward.resolved : deps.reward.unresolved };
}

/**
 * A started sandbox with the episode's tools, from the fleet's supply: leased from creation to kill, with
 * heartbeat and lifetime guard. A lost lease aborts the attempt through `lost` (the sandbox may be reaped).
 */
export async function openEnv(deps: AttemptDeps, input: AttemptInput, role: SandboxRole, lost: AbortController): Promise<SuppliedSandbox> {
  const { episode, logger } = input;
  return deps.supply.acquire({
    sandbox: episode.sandbox,
    tools: toolsFor(episode),
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
