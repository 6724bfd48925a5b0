/**
 * One attempt at one episode: sandbox → tools → replay → grade, with the sandbox closed on every path.
 * Model-side trouble becomes observations (replay.ts); infra trouble throws and the processor decides
 * about retries. The attempt is bounded by the episode deadline and by `signal` (cancel, shutdown).
 */
import {
  toolCallToCommand,
  type AgentEnv,
  type Episode,
  type GradingReport,
  type Logger,
  type StepRecord,
} from '@rollout-fleet/shared';
import { diffWorkingTree, gradeInSandbox } from '../grading/grade-in-sandbox.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import type { SandboxRole, SandboxSupply, SuppliedSandbox } from '../supply/sandbox-supply.js';
import { replayTrajectory } from './replay.js';

export interface AttemptDeps {
  /** The fleet's one door to sandboxes (rate, caps, warm pool, leases). */
  supply: SandboxSupply;
  metrics: WorkerMetrics;
  workerId: string;
  outputLimitBytes: number;
  freshEval: boolean;
  reward: { resolved: number; unresolved: number };
}

export interface AttemptOutcome {
  steps: StepRecord[];
  patch: string | null;
  report: GradingReport | null;
  resolved: boolean | null;
  reward: number | null;
  sandboxId: string | null;
  timings: { sandboxAcquireMs: number; replayMs: number; gradeMs: number };
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
  /** Reports the sandbox id as soon as it exists (logs, attempt records). */
  onSandbox?: (sandboxId: string) => void;
}

export async function runAttempt(deps: AttemptDeps, input: AttemptInput): Promise<AttemptOutcome> {
  const { episode } = input;
  const timings = { sandboxAcquireMs: 0, replayMs: 0, gradeMs: 0 };
  // A lost lease stops the attempt like a cancel does: the sandbox may be reaped under us.
  const lost = new AbortController();
  input = { ...input, signal: AbortSignal.any([input.signal, lost.signal]) };
  const acquired = performance.now();
  const main = await openEnv(deps, input, 'main', lost);
  try {
    input.onSandbox?.(main.sandboxId);
    timings.sandboxAcquireMs = performance.now() - acquired;
    if (input.startDeadline) {
      input = { ...input, deadline: input.startDeadline() };
      main.extendDeadline(input.deadline);
    }

    const replayStarted = performance.now();
    const steps = await replayTrajectory({
      shell: main.env,
      trajectory: episode.trajectory,
      stepTimeoutS: episode.limits.step_timeout_s,
      outputLimitBytes: deps.outputLimitBytes,
      toCommand: toolCallToCommand,
      signal: input.signal,
      onStep: async (step, total) => {
        deps.metrics.steps.inc({ tool: step.tool });
        deps.metrics.stepSeconds.observe({ tool: step.tool }, step.duration_ms / 1000);
        await input.onStep?.(step, total);
      },
    });
    timings.replayMs = performance.now() - replayStarted;

    const gradeStarted = performance.now();
    const graded = await grade(deps, input, main.env);
    timings.gradeMs = performance.now() - gradeStarted;
    return { steps, ...graded, sandboxId: main.sandboxId, timings };
  } finally {
    await main.release();
  }
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
    tools: episode.tools,
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
