/**
 * Wire contract: the body of one `POST <base_url>/chat/completions` of a policy turn. Every sampling parameter is
 * sent explicitly (servers otherwise apply the model's generation_config.json silently); vLLM/SGLang extras go only
 * to those servers (OpenAI rejects unknown fields); capture options ask for logprobs and token ids.
 */
import type { Policy, ChatMessage } from '@rollout-fleet/shared';
import type { OpenAiToolSchema } from '@rollout-fleet/sandbox';

export interface ChatRequestInput {
  policy: Policy;
  messages: readonly ChatMessage[];
  tools: readonly OpenAiToolSchema[];
  parallelToolCalls: boolean;
  /** This turn's cap (the configured one, clamped to the context left). */
  maxCompletionTokens: number;
}

/** The sampling fields of the body, as recorded in the turn. */
export function samplingFields(policy: Policy, maxCompletionTokens: number): Record<string, unknown> {
  const s = policy.sampling;
  const fields: Record<string, unknown> = {
    temperature: s.temperature,
    top_p: s.top_p,
    max_completion_tokens: maxCompletionTokens,
    presence_penalty: s.presence_penalty,
    frequency_penalty: s.frequency_penalty,
  };
  if (policy.server_kind !== 'openai') {
    fields.top_k = s.top_k;
    fields.min_p = s.min_p;
    fields.repetition_penalty = s.repetition_penalty;
  }
  if (s.seed !== undefined) fields.seed = s.seed;
  if (s.stop !== undefined) fields.stop = s.stop;
  return fields;
}

/** Only what the wire carries: recorded extras such as `reasoning_content` are not sent back. */
function wireMessage(message: ChatMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { role: message.role, content: message.content };
  if (message.tool_calls !== undefined) out.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  return out;
}

export function buildChatRequest(input: ChatRequestInput): Record<string, unknown> {
  const { policy } = input;
  const body: Record<string, unknown> = {
    ...policy.extra_body,
    model: policy.model,
    messages: input.messages.map(wireMessage),
    tools: input.tools,
    tool_choice: policy.tool_choice,
    parallel_tool_calls: input.parallelToolCalls,
    stream: false,
    ...samplingFields(policy, input.maxCompletionTokens),
  };
  if (policy.capture.logprobs) {
    body.logprobs = true;
    if (policy.capture.top_logprobs > 0) body.top_logprobs = policy.capture.top_logprobs;
  }
  if (policy.capture.token_ids && policy.server_kind !== 'openai') {
    body.return_token_ids = true;
    if (policy.server_kind === 'sglang') body.return_prompt_token_ids = true;
  }
  return body;
}
