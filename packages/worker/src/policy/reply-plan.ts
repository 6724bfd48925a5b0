/**
 * What to do with one assistant reply, per tool profile: submit, finish (a reply without a call, where the profile
 * ends that way), execute its calls, or answer it with a format error. Every tool_call_id of a reply that is not
 * executed still gets a tool message (OpenAI rejects a history where a call has no answer).
 */
import type { ChatMessage } from '@rollout-fleet/shared';
import type { ToolProfile } from './tool-profiles.js';
import { blockedObservation, isBlockedCommand } from './blocklist.js';
import { FORMAT_ERROR_TEXTS, hasToolCallMarkup, multipleCallsText } from './format-errors.js';

export interface PlannedCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ReplyPlan =
  | { kind: 'submit' }
  | { kind: 'finished' }
  | {
      kind: 'format';
      code: 'POLICY_FORMAT_ERROR' | 'POLICY_BLOCKED_COMMAND';
      /** The user message when the reply had no calls; else a summary for the turn record. */
      message: string;
      /** One tool message per call of the reply (empty when it had none). */
      replies: Array<{ id: string; content: string }>;
    }
  | { kind: 'execute'; calls: PlannedCall[] };

const BASH_TOOLS = new Set(['bash', 'execute_bash']);

function parseObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function bashCommandOf(args: Record<string, unknown>): string | undefined {
  const command = args.command ?? args.cmd;
  return typeof command === 'string' ? command.trim() : undefined;
}

export function planReply(input: {
  message: ChatMessage;
  finishReason: string | null;
  profile: ToolProfile;
  parallel: boolean;
  workingDir: string;
}): ReplyPlan {
  const { message, profile } = input;
  const calls = message.tool_calls ?? [];
  const truncated = input.finishReason === 'length';
  if (calls.length === 0) {
    let text: string | undefined;
    if (hasToolCallMarkup(message.content)) text = FORMAT_ERROR_TEXTS.markup;
    else if (truncated) text = FORMAT_ERROR_TEXTS.length;
    else if (profile.endsWithoutCall) return { kind: 'finished' };
    else text = input.parallel ? FORMAT_ERROR_TEXTS.missingParallel : FORMAT_ERROR_TEXTS.missing;
    return { kind: 'format', code: 'POLICY_FORMAT_ERROR', message: text, replies: [] };
  }
  const everyCall = (content: string) => calls.map((call) => ({ id: call.id, content }));
  if (calls.length > 1 && !input.parallel) {
    const text = multipleCallsText(calls.length);
    return { kind: 'format', code: 'POLICY_FORMAT_ERROR', message: text, replies: everyCall(text) };
  }
  if (hasToolCallMarkup(message.content)) {
    return {
      kind: 'format',
      code: 'POLICY_FORMAT_ERROR',
      message: FORMAT_ERROR_TEXTS.markup,
      replies: everyCall(FORMAT_ERROR_TEXTS.markup),
    };
  }

  // Each call checked on its own; one bad call stops the whole reply (a partial execution would be hard to read).
  const problems = new Map<string, { code: 'POLICY_FORMAT_ERROR' | 'POLICY_BLOCKED_COMMAND'; text: string }>();
  const planned: PlannedCall[] = [];
  let submits = 0;
  for (const call of calls) {
    const name = call.function.name;
    if (profile.submitTool !== undefined && name === profile.submitTool) {
      const args = call.function.arguments.trim() === '' ? {} : parseObject(call.function.arguments);
      const extra = Object.keys(args);
      if (extra.length > 0) {
        problems.set(call.id, {
          code: 'POLICY_FORMAT_ERROR',
          text: `Your action could not be parsed properly: Unexpected argument(s): ${extra.join(', ')}.`,
        });
      }
      submits += 1;
      continue;
    }
    const converted = profile.toCommand({ name, arguments: call.function.arguments }, { workingDir: input.workingDir });
    if (!converted.ok) {
      const text = truncated ? `${converted.error.message}\n${FORMAT_ERROR_TEXTS.length}` : converted.error.message;
      problems.set(call.id, { code: 'POLICY_FORMAT_ERROR', text });
      continue;
    }
    const args = parseObject(call.function.arguments);
    const command = BASH_TOOLS.has(name) ? bashCommandOf(args) : undefined;
    if (command !== undefined && isBlockedCommand(command)) {
      problems.set(call.id, { code: 'POLICY_BLOCKED_COMMAND', text: blockedObservation(command) });
      continue;
    }
    planned.push({ id: call.id, name, arguments: args });
  }
  if (problems.size > 0) {
    const first = [...problems.values()][0]!;
    const code = [...problems.values()].every((p) => p.code === 'POLICY_BLOCKED_COMMAND')
      ? 'POLICY_BLOCKED_COMMAND'
      : 'POLICY_FORMAT_ERROR';
    return {
      kind: 'format',
      code,
      message: first.text,
      replies: calls.map((call) => ({
        id: call.id,
        content: problems.get(call.id)?.text ?? FORMAT_ERROR_TEXTS.notExecuted,
      })),
    };
  }
  if (submits > 0) {
    if (planned.length === 0) return { kind: 'submit' };
    // A submit beside other calls (parallel profiles): run them first, then submit.
    return {
      kind: 'execute',
      calls: [
        ...planned,
        ...calls
          .filter((c) => c.function.name === profile.submitTool)
          .map((c) => ({ id: c.id, name: c.function.name, arguments: {} })),
      ],
    };
  }
  return { kind: 'execute', calls: planned };
}
