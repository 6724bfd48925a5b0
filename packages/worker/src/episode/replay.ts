/**
 * The replay driver: runs a trajectory's recorded tool calls in order through the step executor, until the
 * last one, the episode deadline (the model's time: no step starts after it) or a shell that can no longer
 * be had — both model-caused, so the episode is graded all the same.
 */
import { RolloutError, toFailure, type Failure, type StepRecord, type ToolCall } from '@rollout-fleet/shared';
import type { OutputBudget } from './output-limit.js';
import { createStepExecutor, type StepShell, type ToCommand } from './step-executor.js';

export type { StepShell, ToCommand } from './step-executor.js';

export interface ReplayOptions {
  shell: StepShell;
  trajectory: readonly ToolCall[];
  stepTimeoutS: number;
  outputLimitBytes: number;
  /** The episode's budget for step outputs (output-limit.ts). */
  budget?: OutputBudget | undefined;
  /** Gets each step's whole (masked) output. */
  onOutput?: ((index: number, output: string) => void) | undefined;
  toCommand: ToCommand;
  /** Masks the episode's secrets in each observation (step-executor.ts); absent: none to mask. */
  mask?: ((text: string) => string) | undefined;
  /** Called after each step (progress, job log, lease renewal, fidelity); `output` is the whole observation. */
  onStep?: (step: StepRecord, total: number, output: string) => Promise<void> | void;
  /** Checked before each step; aborting stops the replay with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Epoch ms after which no new step starts (the episode deadline). Steps are never cut mid-command — the
   * server runs one request at a time, and grading needs it — so the overrun is at most one step timeout.
   */
  deadline?: number;
  now?: () => number;
}

export interface ReplayOutcome {
  steps: StepRecord[];
  /** Why the replay ended before the last step, when the model caused it (graded all the same). */
  stopped: Failure | null;
}

export async function replayTrajectory(options: ReplayOptions): Promise<ReplayOutcome> {
  const execute = createStepExecutor(options);
  const now = options.now ?? Date.now;
  const steps: StepRecord[] = [];
  for (const [index, call] of options.trajectory.entries()) {
    options.signal?.throwIfAborted();
    if (options.deadline !== undefined && now() >= options.deadline) {
      const left = options.trajectory.length - index;
      return {
        steps,
        stopped: toFailure(
          new RolloutError(
            'EPISODE_DEADLINE',
            `the episode deadline passed before step ${index}; ${left} step(s) not run`,
          ),
        ),
      };
    }
    const { record, output, stopped } = await execute(call, index);
    steps.push(record);
    await options.onStep?.(record, options.trajectory.length, output);
    if (stopped) return { steps, stopped };
  }
  return { steps, stopped: null };
}
