/**
 * Replays a trajectory step by step. Model-side problems (unknown tool, bad arguments, bash syntax
 * errors, step timeouts) become observations of that step, as in the reference agent; infra errors
 * propagate and fail the attempt.
 */
import { coerceError, type StepRecord, type ToolCall } from '@rollout-fleet/shared';
import { keepOutput } from './output-limit.js';
import { syntaxErrorObservation, timeoutObservation } from './observations.js';

export interface StepShell {
  run(command: string, options: { timeoutS: number }): Promise<{ output: string; exitCode: number | null; durationMs: number; timedOut: boolean }>;
}

export type ToCommand = (call: { name: string; arguments: Record<string, unknown> }) =>
  | { ok: true; command: string }
  | { ok: false; error: { code: string; message: string } };

export interface ReplayOptions {
  shell: StepShell;
  trajectory: readonly ToolCall[];
  stepTimeoutS: number;
  outputLimitBytes: number;
  toCommand: ToCommand;
  /** Called after each step (progress, job log, lease renewal). */
  onStep?: (step: StepRecord, total: number) => Promise<void> | void;
  /** Checked before each step; aborting stops the replay with the signal's reason. */
  signal?: AbortSignal;
  now?: () => number;
}

export async function replayTrajectory(options: ReplayOptions): Promise<StepRecord[]> {
  const { trajectory, toCommand } = options;
  const now = options.now ?? Date.now;
  const steps: StepRecord[] = [];
  for (const [index, call] of trajectory.entries()) {
    options.signal?.throwIfAborted();
    const started = now();
    const converted = toCommand({ name: call.name, arguments: call.arguments });
    let step: StepRecord;
    if (!converted.ok) {
      step = {
        index,
        tool: call.name,
        args: call.arguments,
        ...keepOutput(converted.error.message, options.outputLimitBytes),
        exit_code: null,
        duration_ms: now() - started,
        timed_out: false,
        error: { code: 'TOOL_ERROR', message: converted.error.message },
      };
    } else {
      const timeoutS = call.timeout_s ?? options.stepTimeoutS;
      step = await runStep({ ...options, index, call, command: converted.command, timeoutS, started, now });
    }
    steps.push(step);
    await options.onStep?.(step, trajectory.length);
  }
  return steps;
}

async function runStep(o: {
  shell: StepShell;
  index: number;
  call: ToolCall;
  command: string;
  timeoutS: number;
  outputLimitBytes: number;
  started: number;
  now: () => number;
}): Promise<StepRecord> {
  const base = { index: o.index, tool: o.call.name, args: o.call.arguments, command: o.command };
  try {
    const ran = await o.shell.run(o.command, { timeoutS: o.timeoutS });
    const output = ran.timedOut ? timeoutObservation(o.command, o.timeoutS) : ran.output;
    return {
      ...base,
      ...keepOutput(output, o.outputLimitBytes),
      exit_code: ran.timedOut ? null : ran.exitCode,
      duration_ms: ran.durationMs,
      timed_out: ran.timedOut,
      ...(ran.timedOut ? { error: { code: 'STEP_TIMEOUT', message: `step exceeded ${o.timeoutS} s` } } : {}),
    };
  } catch (thrown) {
    const err = coerceError(thrown);
    // Only model-class failures are observations; anything else is the sandbox's fault.
    if (err.class !== 'model') throw err;
    const output =
      err.code === 'SWEREX_BASH_SYNTAX'
        ? syntaxErrorObservation(String(err.details.bash_stdout ?? ''), String(err.details.bash_stderr ?? ''))
        : err.message;
    return {
      ...base,
      ...keepOutput(output, o.outputLimitBytes),
      exit_code: null,
      duration_ms: o.now() - o.started,
      timed_out: false,
      error: { code: err.code, message: err.message },
    };
  }
}
