/**
 * Wire contract: a non-streaming chat completion (`object: "chat.completion"`) from OpenAI, vLLM or SGLang →
 * the fields the agent loop uses. Lenient about extras, strict about what it needs: a body without
 * `choices[0].message` is POLICY_BAD_RESPONSE; `finish_reason` `error` (vLLM engine failure) or `abort` (SGLang)
 * is POLICY_SERVER_ERROR — both infra, retried per turn. Token ids are located where each server puts them
 * (vLLM: `prompt_token_ids` at the root, `choices[0].token_ids`; SGLang: both on the choice).
 */
import type { ChatMessage, ToolCallMessage, Usage } from '@rollout-fleet/shared';
import { RolloutError } from '@rollout-fleet/shared';
import { parseJsonObject, snippet } from '@rollout-fleet/sandbox';

export interface LogprobEntry {
  token: string;
  logprob: number;
}

export interface ParsedCompletion {
  id: string | null;
  model: string | null;
  systemFingerprint: string | null;
  /** The assistant message; tool-call arguments kept as the exact string returned (objects are serialized). */
  message: ChatMessage;
  finishReason: string | null;
  stopReason: string | number | null;
  usage: Usage | null;
  promptTokenIds: unknown;
  completionTokenIds: unknown;
  /** `choices[0].logprobs.content`, when present. */
  logprobs: LogprobEntry[] | undefined;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function bad(message: string, text: string): RolloutError {
  return new RolloutError('POLICY_BAD_RESPONSE', `${message}: ${snippet(text)}`);
}

function toolCallsOf(raw: unknown, fallbackId: (index: number) => string): ToolCallMessage[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  return raw.map((call, index) => {
    const fn = isObject(call) && isObject(call['function']) ? call['function'] : {};
    const args = fn['arguments'];
    return {
      id: isObject(call) && typeof call['id'] === 'string' && call['id'] !== '' ? call['id'] : fallbackId(index),
      type: 'function' as const,
      function: {
        name: typeof fn['name'] === 'string' ? fn['name'] : '',
        // Some servers send an object; the wire form (and what a parser re-serialized) is a string.
        arguments: typeof args === 'string' ? args : args === undefined || args === null ? '' : JSON.stringify(args),
      },
    };
  });
}

function usageOf(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = raw['prompt_tokens'];
  const completion = raw['completion_tokens'];
  if (typeof prompt !== 'number' || typeof completion !== 'number') return null;
  const total = raw['total_tokens'];
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof total === 'number' ? total : prompt + completion,
  };
}

function logprobsOf(raw: unknown): LogprobEntry[] | undefined {
  if (!isObject(raw) || !Array.isArray(raw['content'])) return undefined;
  return raw['content'].map((entry) => ({
    token: isObject(entry) && typeof entry['token'] === 'string' ? entry['token'] : '',
    logprob: isObject(entry) && typeof entry['logprob'] === 'number' ? entry['logprob'] : Number.NaN,
  }));
}

/**
 * @param fallbackId id for a tool call the server returned without one (the conversation needs an id per call).
 */
export function parseCompletion(text: string, fallbackId: (index: number) => string): ParsedCompletion {
  const body = parseJsonObject(text);
  if (body === undefined) throw bad('policy endpoint answered 200 with a body that is not a JSON object', text);
  const choices = body['choices'];
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  if (!isObject(choice) || !isObject(choice['message'])) throw bad('chat completion without choices[0].message', text);
  const finishReason = stringOrNull(choice['finish_reason']);
  if (finishReason === 'error' || finishReason === 'abort') {
    throw new RolloutError(
      'POLICY_SERVER_ERROR',
      `the inference engine failed the request (finish_reason "${finishReason}")`,
    );
  }
  const raw = choice['message'];
  const content = raw['content'];
  const message: ChatMessage = {
    role: 'assistant',
    content: typeof content === 'string' ? content : null,
  };
  const toolCalls = toolCallsOf(raw['tool_calls'], fallbackId);
  if (toolCalls !== undefined) message.tool_calls = toolCalls;
  const reasoning = raw['reasoning_content'] ?? raw['reasoning'];
  if (typeof reasoning === 'string' && reasoning !== '') message.reasoning_content = reasoning;
  const stop = choice['stop_reason'];
  return {
    id: stringOrNull(body['id']),
    model: stringOrNull(body['model']),
    systemFingerprint: stringOrNull(body['system_fingerprint']),
    message,
    finishReason,
    stopReason: typeof stop === 'string' || typeof stop === 'number' ? stop : null,
    usage: usageOf(body['usage']),
    promptTokenIds: body['prompt_token_ids'] ?? choice['prompt_token_ids'],
    completionTokenIds: choice['token_ids'],
    logprobs: logprobsOf(choice['logprobs']),
  };
}
