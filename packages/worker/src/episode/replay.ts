/**
 * The replay driver: runs a trajectory's recorded tool calls in order through the step executor.
 */
import type { StepRecord, ToolCall } from '@rollout-fleet/shared';
import { createStepExecutor, type StepShell, type ToCommand } from './step-executor.js';

export type { StepShell, ToCommand } from './step-executor.js';

export interface ReplayOptions {
  shell: StepShell;
  trajectory: readonly ToolCall[];
  stepTimeoutS: number;
  outputLimitBytes: number;
  toCommand: ToCommand;
  /** Called after each step (progress, job log, lease renewal, fidelity); `output` is the whole observation. */
  onStep?: (step: StepRecord, total: number, output: string) => Promise<void> | void;
  /** Checked before each step; aborting stops the replay with the signal's reason. */
  signal?: AbortSignal;
  now?: () => number;
}

export async function replayTrajectory(options: ReplayOptions): Promise<StepRecord[]> {
  const execute = createStepExecutor(options);
  const steps: StepRecord[] = [];
  for (const [index, call] of options.trajectory.entries()) {
    options.signal?.throwIfAborted();
    const { record, output } = await execute(call, index);
    steps.push(record);
    await options.onStep?.(record, options.trajectory.length, output);
  }
  return steps;
}
