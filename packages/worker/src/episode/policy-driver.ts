/**
 * The policy driver: the agent loop in which the model under training chooses every action. Per turn: request
 * (through `requestTurn`: inflight slot, per-turn infra retries) → plan the reply (submit / finish / execute /
 * format error) → run its calls through the same step executor as the replay driver → one tool message per
 * tool_call_id → repeat, until a submission, a limit, a context overflow or the deadline (the signal).
 *
 * What the model causes ends the loop with an exit reason and is graded afterwards; what infrastructure causes
 * (requests that keep failing, a dead sandbox) is thrown and fails the attempt (retried, reward null).
 * A trajectory given with the policy is replayed first, as the conversation's opening turns.
 *
 * Stops: an aborted `signal` (run cancelled, episode forced, worker shutting down, lease lost) is thrown as its
 * reason at the next check — before each turn and each call — and aborts a request in flight (the requester gives
 * its inflight slot back); a running command ends with its sandbox. A shell the model broke beyond repair (no new
 * session will start: the step executor's `stopped`) ends the loop as `exit_environment_error`, graded on the diff
 * so far like a replay that stops there; asking the model for more turns would only get "no shell" observations.
 */
import { captureTokens } from '../policy-client/token-capture.js';
import {
  coerceError,
  encodeTurnTokens,
  renderTemplate,
  effectiveTemplates,
  templateValuesOf,
  type ChatMessage,
  type Episode,
  type Failure,
  type FullTurnIds,
  type Policy,
  type StepRecord,
  type TokenTotals,
  type ToolCall,
  type TurnRecord,
} from '@rollout-fleet/shared';
import { buildChatRequest, samplingFields } from '../policy-client/chat-request.js';
import { toolProfile } from '../policy/tool-profiles.js';
import { planReply, type PlannedCall } from '../policy/reply-plan.js';
import { FORMAT_ERROR_TEXTS } from '../policy/format-errors.js';
import type { TurnRequester } from '../policy/turn-request.js';
import type { StepExecutor } from './step-executor.js';

/** How the loop ended (SWE-agent's reasons); `submitted` is the normal end. */
export type PolicyExit =
  | 'submitted'
  | 'exit_format'
  | 'exit_context'
  | 'exit_cost'
  | 'exit_total_execution_time'
  | 'exit_command_timeout'
  | 'exit_environment_error';

export interface PolicyRun {
  steps: StepRecord[];
  turns: TurnRecord[];
  messages: ChatMessage[];
  exit: PolicyExit;
  tokens: TokenTotals;
  /** Why the loop could not go on when the model broke its shell beyond repair (`exit_environment_error`). */
  stopped: Failure | null;
}

export interface PolicyDriverOptions {
  episode: Episode & { policy: Policy };
  /** The step executor of the episode's sandbox; its tool-call conversion must be the profile's. */
  execute: StepExecutor;
  requestTurn: TurnRequester;
  onStep?: (step: StepRecord) => Promise<void> | void;
  onTurn?: (turn: TurnRecord) => Promise<void> | void;
  signal?: AbortSignal;
  /** Epoch ms of the episode deadline (the model's time): no turn starts after it (exit_total_execution_time). */
  deadline?: number;
  now?: () => number;
}

/** SWE-agent's exit status for a loop end, once the patch is known. */
export function exitStatusOf(exit: PolicyExit, patch: string | null): string {
  if (exit === 'submitted') return 'submitted';
  return patch !== null && patch.trim() !== '' ? `submitted (${exit})` : exit;
}

export function workingDirOf(episode: Episode): string {
  return templateValuesOf(episode).working_dir ?? '/testbed';
}

export async function runPolicyLoop(options: PolicyDriverOptions): Promise<PolicyRun> {
  const { episode, execute, signal } = options;
  const policy = episode.policy;
  const limits = policy.limits;
  const profile = toolProfile(policy.tool_profile);
  const parallel = policy.parallel_tool_calls ?? profile.parallelToolCalls;
  const workingDir = workingDirOf(episode);
  const now = options.now ?? (() => performance.now());
  const values = templateValuesOf(episode);
  const templates = effectiveTemplates(policy);
  const messages: ChatMessage[] = [
    { role: 'system', content: renderTemplate(templates.system, values) },
    { role: 'user', content: renderTemplate(templates.instance, values) },
  ];
  const steps: StepRecord[] = [];
  const turns: TurnRecord[] = [];
  const tokens: TokenTotals = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  /** Set once the step executor says no shell can be had any more. */
  let stopped: Failure | null = null;

  const runCall = async (
    call: { name: string; arguments: Record<string, unknown>; timeout_s?: number | undefined },
    extra: Pick<StepRecord, 'turn' | 'tool_call_id'>,
  ) => {
    const executed = await execute(call, steps.length);
    const record: StepRecord = { ...executed.record, ...extra };
    steps.push(record);
    await options.onStep?.(record);
    stopped ??= executed.stopped ?? null;
    return {
      record,
      observation: profile.observation({ output: executed.output, exitCode: record.exit_code }),
      output: executed.output,
    };
  };

  // A recorded opening, replayed: each call becomes an assistant tool call answered by its observation.
  for (const [index, call] of episode.trajectory.entries()) {
    signal?.throwIfAborted();
    const id = prefixCallId(call, index);
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
    });
    const ran = await runCall(call, { tool_call_id: id });
    messages.push({ role: 'tool', tool_call_id: id, content: ran.observation });
    if (stopped) return done('exit_environment_error');
  }

  let agentMs = 0;
  let formatErrors = 0;
  let timeouts = 0;
  let previousIds: FullTurnIds | undefined;
  let lastTotal: number | undefined;
  for (let index = 0; ; index += 1) {
    signal?.throwIfAborted();
    if (index >= limits.max_turns) return done('exit_cost');
    if (agentMs >= limits.wall_s * 1000) return done('exit_total_execution_time');
    if (options.deadline !== undefined && Date.now() >= options.deadline) return done('exit_total_execution_time');
    let maxTokens = policy.sampling.max_completion_tokens;
    let clamped = false;
    if (policy.max_model_len !== undefined && lastTotal !== undefined) {
      // The next prompt holds at least the last prompt and completion: this much room is left, at most.
      const room = policy.max_model_len - lastTotal;
      if (room < 1) return done('exit_context');
      if (room < maxTokens) {
        maxTokens = room;
        clamped = true;
      }
    }
    const started = now();
    const body = buildChatRequest({
      policy,
      messages,
      tools: profile.tools,
      parallelToolCalls: parallel,
      maxCompletionTokens: maxTokens,
    });
    let response;
    try {
      response = await options.requestTurn({
        body,
        fallbackToolCallId: (i) => `call_${index}_${i}`,
        ...(signal ? { signal } : {}),
      });
    } catch (thrown) {
      if (coerceError(thrown).code === 'POLICY_CONTEXT_OVERFLOW') return done('exit_context');
      throw thrown;
    }
    const { completion } = response;
    const captured = captureTokens({
      usage: completion.usage,
      promptTokenIds: completion.promptTokenIds,
      completionTokenIds: completion.completionTokenIds,
      logprobs: completion.logprobs,
      want: {
        tokenIds: policy.capture.token_ids && policy.server_kind !== 'openai',
        logprobs: policy.capture.logprobs,
      },
    });
    const ids =
      captured.promptIds !== null && captured.completionIds !== null
        ? { promptIds: captured.promptIds, completionIds: captured.completionIds }
        : undefined;
    const turn: TurnRecord = {
      index,
      sampling: samplingFields(policy, maxTokens),
      prompt_messages: messages.length,
      message: completion.message,
      finish_reason: completion.finishReason,
      stop_reason: completion.stopReason,
      response_id: completion.id,
      model: completion.model,
      system_fingerprint: completion.systemFingerprint,
      usage: completion.usage,
      tokens: ids === undefined ? null : encodeTurnTokens(ids, previousIds),
      logprobs: captured.logprobs,
      ...(captured.problems.length > 0 ? { capture_problem: captured.problems.join('; ') } : {}),
      latency_ms: response.latencyMs,
      retries: response.retries,
      retry_codes: response.retryCodes,
      slot_wait_ms: response.slotWaitMs,
      steps: [],
      duration_ms: 0,
    };
    previousIds = ids;
    if (completion.usage !== null) {
      lastTotal = completion.usage.total_tokens;
      tokens.prompt_tokens += completion.usage.prompt_tokens;
      tokens.completion_tokens += completion.usage.completion_tokens;
      tokens.total_tokens += completion.usage.total_tokens;
    }
    messages.push(
      completion.message.reasoning_content === undefined ? completion.message : withoutReasoning(completion.message),
    );

    let exit: PolicyExit | undefined;
    const finishTurn = async (): Promise<PolicyExit | undefined> => {
      turn.duration_ms = now() - started;
      agentMs += turn.duration_ms - response.infraMs;
      turns.push(turn);
      await options.onTurn?.(turn);
      return exit;
    };

    if (completion.finishReason === 'length' && clamped) {
      // The reply ran into the end of the context window: the conversation cannot go on.
      answerUnexecuted(messages, completion.message, FORMAT_ERROR_TEXTS.notExecuted);
      await finishTurn();
      return done('exit_context');
    }
    const plan = planReply({
      message: completion.message,
      finishReason: completion.finishReason,
      profile,
      parallel,
      workingDir,
    });
    switch (plan.kind) {
      case 'submit':
      case 'finished':
        exit = 'submitted';
        break;
      case 'format':
        turn.format_error = { code: plan.code, message: plan.message };
        if (plan.replies.length === 0) messages.push({ role: 'user', content: plan.message });
        for (const reply of plan.replies)
          messages.push({ role: 'tool', tool_call_id: reply.id, content: reply.content });
        formatErrors += 1;
        if (formatErrors >= limits.max_format_errors) exit = 'exit_format';
        break;
      case 'execute': {
        const outcome = await executeCalls(plan.calls, index);
        if (outcome.syntaxError !== undefined) {
          turn.format_error = { code: 'SWEREX_BASH_SYNTAX', message: outcome.syntaxError };
          formatErrors += 1;
          if (formatErrors >= limits.max_format_errors) exit = 'exit_format';
        } else {
          formatErrors = 0;
        }
        timeouts = outcome.timedOut ? timeouts + 1 : 0;
        if (outcome.submitted) exit = 'submitted';
        else if (stopped) exit = 'exit_environment_error';
        else if (exit === undefined && timeouts >= limits.max_consecutive_timeouts) exit = 'exit_command_timeout';
        turn.steps = outcome.stepIndices;
        break;
      }
    }
    const ended = await finishTurn();
    if (ended !== undefined) return done(ended);
  }

  async function executeCalls(calls: PlannedCall[], turnIndex: number) {
    const stepIndices: number[] = [];
    let submitted = false;
    let timedOut = false;
    let syntaxError: string | undefined;
    for (const call of calls) {
      if (submitted) {
        messages.push({ role: 'tool', tool_call_id: call.id, content: FORMAT_ERROR_TEXTS.notExecutedAfterSubmit });
        continue;
      }
      if (stopped) {
        messages.push({ role: 'tool', tool_call_id: call.id, content: FORMAT_ERROR_TEXTS.notExecutedNoShell });
        continue;
      }
      if (profile.submitTool !== undefined && call.name === profile.submitTool) {
        submitted = true;
        continue;
      }
      signal?.throwIfAborted();
      const ran = await runCall(call, { turn: turnIndex, tool_call_id: call.id });
      stepIndices.push(ran.record.index);
      messages.push({ role: 'tool', tool_call_id: call.id, content: ran.observation });
      if (ran.record.timed_out) timedOut = true;
      if (ran.record.error?.code === 'SWEREX_BASH_SYNTAX') syntaxError ??= ran.record.error.message;
      if (profile.isSubmission({ output: ran.output, exitCode: ran.record.exit_code })) submitted = true;
    }
    return { stepIndices, submitted, timedOut, syntaxError };
  }

  function done(exit: PolicyExit): PolicyRun {
    return { steps, turns, messages, exit, tokens, stopped: exit === 'exit_environment_error' ? stopped : null };
  }
}

/** A recorded call's id in the conversation: its own when it has one. */
function prefixCallId(call: ToolCall, index: number): string {
  return call.id !== undefined && call.id !== '' ? call.id : `replay_${index}`;
}

/** Reasoning text is recorded in the turn, not sent back (chat templates drop it from history). */
function withoutReasoning(message: ChatMessage): ChatMessage {
  const { reasoning_content: _dropped, ...rest } = message;
  return rest;
}

function answerUnexecuted(messages: ChatMessage[], message: ChatMessage, text: string): void {
  for (const call of message.tool_calls ?? []) messages.push({ role: 'tool', tool_call_id: call.id, content: text });
}
