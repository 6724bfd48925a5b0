/**
 * The one step executor both episode drivers use (replay: actions from a trajectory; policy: actions from the
 * model): a tool call → its command line → run in the sandbox's session → a StepRecord. Model-side problems
 * (unknown tool, bad arguments, bash syntax errors, step timeouts) become the step's observation, as in the
 * reference agent; infra errors propagate and fail the attempt.
 */
import { coerceError, type StepRecord } from '@rollout-fleet/shared';
import { keepOutput } from './output-limit.js';
import { syntaxErrorObservation, timeoutObservation } from './observations.js';

export interface StepShell {
  run(command: string, options: { timeoutS: number }): Promise<{ output: string; exitCode: number | null; durationMs: number; timedOut: boolean }>;
}

export type ToCommand = (call: { name: string; arguments: Record<string, unknown>; action?: string | undefined }) =>
  | { ok: true; command: string }
  | { ok: false; error: { code: string; message: string } };

export interface StepCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Per-step timeout override, seconds. */
  timeout_s?: number | undefined;
  /** The action text a recording agent ran (replayed as it was; see ToolCall.action). */
  action?: string | undefined;
}

export interface ExecutedStep {
  record: StepRecord;
  /** The whole observation text (the record keeps it only up to the output limit). */
  output: string;
}

export interface StepExecutorOptions {
  shell: StepShell;
  toCommand: ToCommand;
  stepTimeoutS: number;
  outputLimitBytes: number;
  now?: () => number;
}

export type StepExecutor = (call: StepCall, index: number) => Promise<ExecutedStep>;

export function createStepExecutor(options: StepExecutorOptions): StepExecutor {
  const now = options.now ?? Date.now;
  return async (call, index) => {
    const started = now();
    const converted = options.toCommand({ name: call.name, arguments: call.arguments, action: call.action });
    if (!converted.ok) {
      const output = converted.error.message;
      return {
        output,
        record: {
          index,
          tool: call.name,
          args: call.arguments,
          ...keepOutput(output, options.outputLimitBytes),
          exit_code: null,
          duration_ms: now() - started,
          timed_out: false,
          error: { code: 'TOOL_ERROR', message: converted.error.message },
        },
      };
    }
    const timeoutS = call.timeout_s ?? options.stepTimeoutS;
    return runStep({ ...options, index, call, command: converted.command, timeoutS, started, now });
  };
}

async function runStep(o: StepExecutorOptions & {
  index: number;
  call: StepCall;
  command: string;
  timeoutS: number;
  started: number;
  now: () => number;
}): Promise<ExecutedStep> {
  const base = { index: o.index, tool: o.call.name, args: o.call.arguments, command: o.command };
  try {
    const ran = await o.shell.run(o.command, { timeoutS: o.timeoutS });
    const output = ran.timedOut ? timeoutObservation(o.command, o.timeoutS) : ran.output;
    return {
      output,
      record: {
        ...base,
        ...keepOutput(output, o.outputLimitBytes),
        exit_code: ran.timedOut ? null : ran.exitCode,
        duration_ms: ran.durationMs,
        timed_out: ran.timedOut,
        ...(ran.timedOut ? { error: { code: 'STEP_TIMEOUT', message: `step exceeded ${o.timeoutS} s` } } : {}),
      },
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
      output,
      record: {
        ...base,
        ...keepOutput(output, o.outputLimitBytes),
        exit_code: null,
        duration_ms: o.now() - o.started,
        timed_out: false,
        error: { code: err.code, message: err.message },
      },
    };
  }
}
