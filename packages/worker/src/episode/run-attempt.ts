/**
 * One attempt at one episode: sandbox → tools → replay → grade, with the sandbox closed on every path.
 * Model-side trouble becomes observations (replay.ts); infra trouble throws and the processor decides
 * about retries. The attempt is bounded by the episode deadline and by `signal` (cancel, shutdown).
 */
import {
  AgentEnv,
  toolCallToCommand,
  type Episode,
  type GradingReport,
  type Logger,
  type StepRecord,
  type VefaasTarget,
} from '@rollout-fleet/shared';
import { diffWorkingTree, gradeInSandbox } from '../grading/grade-in-sandbox.js';
import type { LeaseStore } from '../leases/lease-store.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { LeaseKeeper } from '../sandbox/lease-keeper.js';
import type { Semaphore } from '../sandbox/semaphore.js';
import { replayTrajectory } from './replay.js';

export interface AttemptDeps {
  target: VefaasTarget;
  leases: LeaseStore;
  metrics: WorkerMetrics;
  startLimiter: Semaphore;
  workerId: string;
  /** Label every sandbox carries, so the reaper can find this fleet's strays. */
  fleetLabel: string;
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
  /** Epoch ms the attempt must end by. */
  deadline: number;
  onStep?: (step: StepRecord, total: number) => Promise<void>;
  /** Reports the sandbox id as soon as it exists (logs, attempt records). */
  onSandbox?: (sandboxId: string) => void;
}

export const FLEET_LABEL_KEY = 'rf-fleet';
const MINUTE_S = 60;

export async function runAttempt(deps: AttemptDeps, input: AttemptInput): Promise<AttemptOutcome> {
  const { episode } = input;
  const timings = { sandboxAcquireMs: 0, replayMs: 0, gradeMs: 0 };
  // A lost lease stops the attempt like a cancel does: the sandbox may be reaped under us.
  const lost = new AbortController();
  input = { ...input, signal: AbortSignal.any([input.signal, lost.signal]) };
  const main = openEnv(deps, input, 'main', lost);
  try {
    const acquired = performance.now();
    await deps.startLimiter.use(() => main.env.start());
    timings.sandboxAcquireMs = performance.now() - acquired;
    deps.metrics.sandboxCreateSeconds.observe(timings.sandboxAcquireMs / 1000);
    await main.env.installTools(episode.tools);

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
    return { steps, ...graded, sandboxId: main.env.sandboxId ?? null, timings };
  } finally {
    await main.close();
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
    const evalEnv = openEnv(deps, input, 'eval', new AbortController());
    try {
      const acquired = performance.now();
      await deps.startLimiter.use(() => evalEnv.env.start());
      deps.metrics.sandboxCreateSeconds.observe((performance.now() - acquired) / 1000);
      grade = await run(evalEnv.env);
    } finally {
      await evalEnv.close();
    }
  } else {
    grade = await run(env);
  }
  const resolved = grade.report.resolved;
  return { patch, report: grade.report, resolved, reward: resolved ? deps.reward.resolved : deps.reward.unresolved };
}

/** An AgentEnv whose sandbox is leased from creation to kill, with heartbeat and lifetime guard. */
function openEnv(
  deps: AttemptDeps,
  input: AttemptInput,
  role: 'main' | 'eval',
  lost: AbortController,
): { env: AgentEnv; close: () => Promise<void> } {
  const { episode, logger } = input;
  const remainingS = Math.max(3 * MINUTE_S, Math.ceil((input.deadline - Date.now()) / 1000) + 5 * MINUTE_S);
  // Lifetime nests above the deadline: the platform's own timeout is the last backstop, never a mid-rollout kill.
  const lifetimeS = Math.min(24 * 60 * MINUTE_S, Math.max(episode.sandbox.lifetime_s, remainingS));
  let keeper: LeaseKeeper | undefined;
  const env: AgentEnv = new AgentEnv({
    target: deps.target,
    sandbox: { ...episode.sandbox, lifetime_s: lifetimeS },
    metadata: {
      [FLEET_LABEL_KEY]: deps.fleetLabel,
      'rf-run': episode.run_id,
      'rf-worker': deps.workerId,
      'rf-role': role,
    },
    defaultTimeoutS: episode.limits.step_timeout_s,
    logger,
    signal: input.signal,
    onCreated: async (sandboxId) => {
      input.onSandbox?.(sandboxId);
      deps.metrics.liveSandboxes.inc();
      const lease = await deps.leases.acquire({ sandboxId, workerId: deps.workerId, jobId: input.jobId });
      keeper = new LeaseKeeper({
        leases: deps.leases,
        lease,
        logger,
        expiresAt: Date.now() + lifetimeS * 1000,
        deadline: input.deadline,
        extendLifetime: (seconds) => env.extendLifetime(seconds),
        onLost: (err) => {
          logger.error({ err, sandboxId }, 'sandbox lease lost');
          lost.abort(err);
        },
      });
    },
    onClosed: async (sandboxId) => {
      keeper?.stop();
      deps.metrics.liveSandboxes.dec();
      await deps.leases.release(sandboxId);
    },
  });
  return {
    env,
    close: async () => {
      try {
        await env.close();
      } catch (err) {
        // The lease stays: the reaper kills the sandbox once it expires.
        keeper?.stop();
        logger.warn({ err, sandboxId: env.sandboxId }, 'could not kill sandbox; leaving it to the reaper');
      }
    },
  };
}

