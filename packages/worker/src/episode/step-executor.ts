/**
 * The one step executor both episode drivers use (replay: actions from a trajectory; policy: actions from the
 * model): a tool call → its command line → run in the sandbox's session → a StepRecord. Model-side problems
 * (unknown tool, bad arguments, bash syntax errors, step timeouts) become the step's observation, as in the
 * reference agent; infra errors propagate and fail the attempt.
 *
 * A broken shell is the model's doing too: a step that ends its session (`exit`, `kill -9 $$`, an `exec` that
 * ends) or wedges it (ignores Ctrl-C and Ctrl-Z) is recorded, a new session is started in the same sandbox,
 * and the next step's observation says so. If no new session will start (the model poisoned what a new shell
 * reads), every later step is answered without running, and `stopped` tells the driver.
 */
import { RolloutError, coerceError, toFailure, type Failure, type StepRecord } from '@rollout-fleet/shared';
import { keepOutput, type KeptOutput, type OutputBudget } from './output-limit.js';
import {
  noShellObservation,
  sessionRestartedNote,
  syntaxErrorObservation,
  timeoutObservation,
} from './observations.js';
import { SANDBOX_LOSS } from '../grading/verdict.js';

export interface StepShell {
  run(
    command: string,
    options: { timeoutS: number },
  ): Promise<{
    output: string;
    exitCode: number | null;
    durationMs: number;
    timedOut: boolean;
    sessionLost?: 'ended' | 'unresponsive';
    /** The output's true size when it was cut while being read. */
    outputBytes?: number;
  }>;
  /** A new session in the same sandbox after the model broke its shell (absent: no recovery). */
  restartSession?(): Promise<void>;
}

export type ToCommand = (call: {
  name: string;
  arguments: Record<string, unknown>;
  action?: string | undefined;
}) => { ok: true; command: string } | { ok: false; error: { code: string; message: string } };

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
  /** Set once no shell can be had any more (a model failure): the driver should end the episode. */
  stopped?: Failure;
}

export interface StepExecutorOptions {
  shell: StepShell;
  toCommand: ToCommand;
  stepTimeoutS: number;
  outputLimitBytes: number;
  /** The episode's budget for step outputs (output-limit.ts); absent: each step keeps up to `outputLimitBytes`. */
  budget?: OutputBudget | undefined;
  /** Gets each step's whole (masked) output, e.g. for RF_ARTIFACTS_DIR. */
  onOutput?: ((index: number, output: string) => void) | undefined;
  /**
   * The episode's secret masker (@rollout-fleet/shared createSecretMasker): applied to every observation and error
   * text here, before it is cut to the output limit (a cut must not leave half a secret) and before anyone —
   * the model, fidelity, job logs, the result — sees it. Absent: the episode has no secrets.
   */
  mask?: ((text: string) => string) | undefined;
  now?: () => number;
}

export type StepExecutor = (call: StepCall, index: number) => Promise<ExecutedStep>;

export function createStepExecutor(options: StepExecutorOptions): StepExecutor {
  const execute = masked(options);
  const { budget, onOutput } = options;
  if (!budget && !onOutput) return execute;
  // Spent once per step, on the record as kept (masked): the allowance stays the same while one step runs.
  return async (call, index) => {
    const step = await execute(call, index);
    budget?.spend(Buffer.byteLength(step.record.output, 'utf8'));
    onOutput?.(index, step.output);
    return step;
  };
}

/** What the next output may keep: the per-step limit, or less once the episode's budget is spent. */
function limitOf(options: StepExecutorOptions): number {
  return options.budget ? Math.min(options.outputLimitBytes, options.budget.allowance()) : options.outputLimitBytes;
}

function masked(options: StepExecutorOptions): StepExecutor {
  const execute = unmaskedExecutor(options);
  const { mask } = options;
  if (!mask) return execute;
  return async (call, index) => {
    const step = await execute(call, index);
    const output = mask(step.output);
    return {
      ...step,
      output,
      record: maskedRecord(step.record, {
        output,
        changed: output !== step.output,
        mask,
        limitBytes: limitOf(options),
      }),
    };
  };
}

/**
 * The record with its observation masked and cut again from the whole observation (masking after the cut could
 * miss a secret the cut split), and its error text masked; `output_bytes` stays the unmasked size the sandbox
 * produced.
 */
function maskedRecord(
  record: StepRecord,
  o: { output: string; changed: boolean; mask: (text: string) => string; limitBytes: number },
): StepRecord {
  const error = record.error && { ...record.error, message: o.mask(record.error.message) };
  if (!o.changed && error?.message === record.error?.message) return record;
  const kept = o.changed ? keepOutput(o.output, o.limitBytes) : record;
  return { ...record, output: kept.output, truncated: record.truncated || kept.truncated, ...(error ? { error } : {}) };
}

function unmaskedExecutor(options: StepExecutorOptions): StepExecutor {
  const now = options.now ?? Date.now;
  /** The note the next observation starts with, after a restart. */
  let note = '';
  /** Why there is no shell any more, once a restart failed. */
  let dead: RolloutError | undefined;
  return async (call, index) => {
    const started = now();
    const converted = options.toCommand({ name: call.name, arguments: call.arguments, action: call.action });
    if (!converted.ok) {
      const output = note + converted.error.message;
      note = '';
      return {
        output,
        record: {
          index,
          tool: call.name,
          args: call.arguments,
          ...keepOutput(output, limitOf(options)),
          exit_code: null,
          duration_ms: now() - started,
          timed_out: false,
          error: { code: 'TOOL_ERROR', message: converted.error.message },
        },
        ...(dead ? { stopped: toFailure(dead) } : {}),
      };
    }
    if (dead) {
      const output = noShellObservation(converted.command);
      const record: StepRecord = {
        index,
        tool: call.name,
        args: call.arguments,
        command: converted.command,
        ...keepOutput(output, limitOf(options)),
        exit_code: null,
        duration_ms: 0,
        timed_out: false,
        error: { code: dead.code, message: dead.message },
      };
      return { output, record, stopped: toFailure(dead) };
    }
    const timeoutS = call.timeout_s ?? options.stepTimeoutS;
    const executed = await runStep(options, { index, call, command: converted.command, timeoutS, started, now, note });
    note = '';
    if (!executed.lost) return executed.step;
    try {
      if (!options.shell.restartSession)
        throw new RolloutError('SESSION_RESTART_FAILED', 'this shell cannot start a new session');
      await options.shell.restartSession();
      note = sessionRestartedNote(converted.command, executed.lost);
      return executed.step;
    } catch (thrown) {
      const err = coerceError(thrown);
      if (err.class !== 'model') throw err;
      dead = err;
      const record = { ...executed.step.record, error: { code: err.code, message: err.message } };
      return { ...executed.step, record, stopped: toFailure(err) };
    }
  };
}

interface StepInput {
  index: number;
  call: StepCall;
  command: string;
  timeoutS: number;
  started: number;
  now: () => number;
  /** Text the observation starts with (the note about a restarted session). */
  note: string;
}

/**
 * Memory: records are built as literals of one shape, never by object spread. A worker holds a thousand episodes'
 * records until they commit, and a spread gives each result its own hidden class (~300 bytes of map and
 * descriptors per record, promoted with it). The options are not copied per step either.
 */
function stepRecord(
  o: StepInput,
  outcome: {
    kept: KeptOutput;
    exitCode: number | null;
    durationMs: number;
    timedOut: boolean;
    error: StepRecord['error'];
  },
): StepRecord {
  const record: StepRecord = {
    index: o.index,
    tool: o.call.name,
    args: o.call.arguments,
    command: o.command,
    output: outcome.kept.output,
    output_bytes: outcome.kept.output_bytes,
    truncated: outcome.kept.truncated,
    exit_code: outcome.exitCode,
    duration_ms: outcome.durationMs,
    timed_out: outcome.timedOut,
  };
  if (outcome.error !== undefined) record.error = outcome.error;
  return record;
}

async function runStep(
  options: StepExecutorOptions,
  o: StepInput,
): Promise<{ step: ExecutedStep; lost?: 'ended' | 'unresponsive' }> {
  try {
    const ran = await options.shell.run(o.command, { timeoutS: o.timeoutS });
    const output = o.note + (ran.timedOut ? timeoutObservation(o.command, o.timeoutS) : ran.output);
    const error =
      ran.sessionLost === 'ended'
        ? { code: 'SWEREX_SESSION_ENDED', message: 'the command ended the shell session' }
        : ran.sessionLost === 'unresponsive'
          ? {
              code: 'SWEREX_INTERRUPT_FAILED',
              message: `step exceeded ${o.timeoutS} s and the session could not be interrupted`,
            }
          : ran.timedOut
            ? { code: 'STEP_TIMEOUT', message: `step exceeded ${o.timeoutS} s` }
            : undefined;
    // The true size, when the output was cut while it was read (bounded-body.ts).
    const original =
      ran.outputBytes === undefined || ran.timedOut ? undefined : Buffer.byteLength(o.note, 'utf8') + ran.outputBytes;
    const kept = keepOutput(output, limitOf(options), original);
    const record = stepRecord(o, {
      kept,
      exitCode: ran.timedOut ? null : ran.exitCode,
      durationMs: ran.durationMs,
      timedOut: ran.timedOut,
      error,
    });
    const step: ExecutedStep = { output, record };
    return ran.sessionLost ? { step, lost: ran.sessionLost } : { step };
  } catch (thrown) {
    const err = coerceError(thrown);
    // Only model-class failures are observations; anything else is the sandbox's fault — unless it happens at the
    // same step on every attempt (the step killed its own server): the processor decides, so it is noted here.
    if (err.class !== 'model') {
      // A session gone under the model's command (closed with the server's token) counts as a loss too.
      if (SANDBOX_LOSS.has(err.code) || err.code === 'SWEREX_SESSION_MISSING')
        Object.assign(err.details, { lostAtStep: o.index });
      throw err;
    }
    // SWE-ReX's extra_info travels as details.extraInfo (SwerexRuntimeError).
    const extra = (err.details.extraInfo ?? {}) as Record<string, unknown>;
    const output =
      o.note +
      (err.code === 'SWEREX_BASH_SYNTAX'
        ? syntaxErrorObservation(String(extra.bash_stdout ?? ''), String(extra.bash_stderr ?? ''))
        : err.message);
    const kept = keepOutput(output, limitOf(options));
    const record = stepRecord(o, {
      kept,
      exitCode: null,
      durationMs: o.now() - o.started,
      timedOut: false,
      error: { code: err.code, message: err.message },
    });
    return { step: { output, record } };
  }
}
