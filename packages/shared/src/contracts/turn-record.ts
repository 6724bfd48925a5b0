/**
 * Wire contract: what a result records for each model turn of a policy episode (one chat-completions request and
 * its reply), and the OpenAI chat messages of the whole conversation. Token ids and logprobs are the server's own
 * (never re-tokenized here) and validated against `usage`; null when the server did not return them.
 */
import { z } from 'zod';

export const ToolCallMessageSchema = z.object({
  id: z.string().describe("The tool call's id (a `tool` message answers it by `tool_call_id`)."),
  type: z.literal('function').describe('Always `function`.'),
  function: z
    .object({
      name: z.string().describe('The tool called.'),
      arguments: z.string().describe('The arguments as the model wrote them (a JSON string, untouched).'),
    })
    .describe('The function call.'),
});
export type ToolCallMessage = z.infer<typeof ToolCallMessageSchema>;

/** One OpenAI chat message, as sent (system, user, tool) or as returned (assistant). */
export const ChatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']).describe('Who speaks.'),
  content: z.string().nullable().describe('The message text; null for an assistant message with only tool calls.'),
  tool_calls: z.array(ToolCallMessageSchema).optional().describe('Assistant messages: the tool calls the model made.'),
  tool_call_id: z.string().optional().describe('Tool messages: the id of the call this observation answers.'),
  reasoning_content: z
    .string()
    .optional()
    .describe(
      'Reasoning text some servers return beside the content (vLLM/SGLang reasoning parsers); never sent back.',
    ),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const UsageSchema = z.object({
  prompt_tokens: z.number().int().min(0).describe('Tokens of the prompt, as the server counted them.'),
  completion_tokens: z.number().int().min(0).describe('Tokens generated.'),
  total_tokens: z.number().int().min(0).describe('prompt_tokens + completion_tokens.'),
});
export type Usage = z.infer<typeof UsageSchema>;

/**
 * The server's token ids of one turn. The prompt is stored as a shared prefix plus a tail: `prompt_ids_reused`
 * leading ids equal the previous turn's prompt followed by its completion (0 on the first turn), so a
 * 50-turn episode does not store its growing prompt 50 times. `extends_previous` is true when the whole previous
 * prompt + completion is that prefix, i.e. the turns can be merged into one sequence.
 */
export const TurnTokensSchema = z.object({
  prompt_len: z.number().int().min(0).describe("Tokens in the whole prompt (prompt_ids_reused + the tail's length)."),
  prompt_ids_reused: z
    .number()
    .int()
    .min(0)
    .describe(
      "Leading prompt ids equal to the previous turn's prompt followed by its completion (0 on the first turn).",
    ),
  prompt_ids_tail: z.array(z.number().int()).describe('The prompt ids after the reused prefix.'),
  completion_ids: z.array(z.number().int()).describe('The generated token ids.'),
  extends_previous: z
    .boolean()
    .describe('The whole previous prompt + completion is the reused prefix: the turns merge into one sequence.'),
});
export type TurnTokens = z.infer<typeof TurnTokensSchema>;

export const TurnRecordSchema = z.object({
  index: z.number().int().min(0).describe('Position of the turn, from 0.'),
  sampling: z
    .record(z.string(), z.unknown())
    .describe("The request's sampling parameters as sent (max_completion_tokens after clamping to the context left)."),
  prompt_messages: z.number().int().min(0).describe('Chat messages in the request.'),
  message: ChatMessageSchema.describe("The assistant message as returned (tool_calls' arguments untouched)."),
  finish_reason: z.string().nullable().describe("The server's finish_reason (`stop`, `length`, `tool_calls`, ...)."),
  stop_reason: z
    .union([z.string(), z.number(), z.null()])
    .describe("vLLM's stop_reason (the stop string or token that ended generation), when given."),
  response_id: z.string().nullable().describe("The response's `id`, when given."),
  model: z.string().nullable().describe('Model name the server answered with.'),
  system_fingerprint: z.string().nullable().describe('Recent vLLM encodes its version here.'),
  usage: UsageSchema.nullable().describe("The server's usage; null when it returned none."),
  tokens: TurnTokensSchema.nullable().describe(
    "The server's token ids of this turn; null when not returned (see capture_problem).",
  ),
  logprobs: z.array(z.number()).nullable().describe("The sampled tokens' logprobs, one per completion token."),
  capture_problem: z
    .string()
    .optional()
    .describe(
      'Why token ids or logprobs are null although they were asked for (absent, or counts disagreeing with usage).',
    ),
  latency_ms: z.number().min(0).describe('Latency of the request that succeeded, ms.'),
  retries: z
    .number()
    .int()
    .min(0)
    .describe(
      'Failed requests of this turn before it succeeded (infra: connection, timeout, 429, 5xx), with their codes.',
    ),
  retry_codes: z.array(z.string()).describe('The error codes of those failed requests, in order.'),
  slot_wait_ms: z
    .number()
    .min(0)
    .describe("Time spent waiting for a fleet-wide inflight slot, ms (infrastructure time, not the agent's)."),
  steps: z
    .array(z.number().int().min(0))
    .describe("Indices into the result's `steps` of the actions this turn executed."),
  format_error: z
    .object({
      code: z.string().describe('Stable error code.'),
      message: z.string().describe('What was wrong, as told to the model.'),
    })
    .optional()
    .describe(
      'Set when the reply was malformed (no call, bad arguments, unknown tool, markup in content, blocked command).',
    ),
  duration_ms: z.number().min(0).describe('Wall time of the whole turn (waiting, request, actions, bookkeeping), ms.'),
});
export type TurnRecord = z.infer<typeof TurnRecordSchema>;

export const TokenTotalsSchema = z.object({
  prompt_tokens: z.number().int().min(0).describe('Prompt tokens summed over the turns.'),
  completion_tokens: z.number().int().min(0).describe('Completion tokens summed over the turns.'),
  total_tokens: z.number().int().min(0).describe('Total tokens summed over the turns.'),
});
export type TokenTotals = z.infer<typeof TokenTotalsSchema>;

/** Which policy produced the episode (never its key). */
export const PolicyRunInfoSchema = z.object({
  base_url: z.string().describe('The OpenAI-compatible API root the requests went to.'),
  model: z.string().describe('The served model name requested.'),
  server_kind: z.string().describe('The server dialect spoken (vllm, sglang, openai).'),
  tool_profile: z.string().describe('The tool set the policy was given (sweagent, mini_bash, seed).'),
  seed: z
    .number()
    .int()
    .optional()
    .describe('The sampling seed this sample was sent (derived from `sampling.seed`); absent when none was set.'),
  tools: z
    .array(z.record(z.string(), z.unknown()))
    .describe('The `tools` array every request carried (SFT exports need it).'),
});
export type PolicyRunInfo = z.infer<typeof PolicyRunInfoSchema>;
