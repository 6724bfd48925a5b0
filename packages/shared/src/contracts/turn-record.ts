/**
 * Wire contract: what a result records for each model turn of a policy episode (one chat-completions request and
 * its reply), and the OpenAI chat messages of the whole conversation. Token ids and logprobs are the server's own
 * (never re-tokenized here) and validated against `usage`; null when the server did not return them.
 */
import { z } from 'zod';

export const ToolCallMessageSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type ToolCallMessage = z.infer<typeof ToolCallMessageSchema>;

/** One OpenAI chat message, as sent (system, user, tool) or as returned (assistant). */
export const ChatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string().nullable(),
  tool_calls: z.array(ToolCallMessageSchema).optional(),
  tool_call_id: z.string().optional(),
  /** Reasoning text some servers return beside the content (vLLM/SGLang reasoning parsers); never sent back. */
  reasoning_content: z.string().optional(),
});
export type ChatMessage = z.infer<typeof ChatMessageSchema>;

export const UsageSchema = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type Usage = z.infer<typeof UsageSchema>;

/**
 * The server's token ids of one turn. The prompt is stored as a shared prefix plus a tail: `prompt_ids_reused`
 * leading ids equal the previous turn's prompt followed by its completion (0 on the first turn), so a
 * 50-turn episode does not store its growing prompt 50 times. `extends_previous` is true when the whole previous
 * prompt + completion is that prefix, i.e. the turns can be merged into one sequence.
 */
export const TurnTokensSchema = z.object({
  prompt_len: z.number().int().min(0),
  prompt_ids_reused: z.number().int().min(0),
  prompt_ids_tail: z.array(z.number().int()),
  completion_ids: z.array(z.number().int()),
  extends_previous: z.boolean(),
});
export type TurnTokens = z.infer<typeof TurnTokensSchema>;

export const TurnRecordSchema = z.object({
  index: z.number().int().min(0),
  /** The request's sampling parameters as sent (max_completion_tokens after clamping to the context left). */
  sampling: z.record(z.string(), z.unknown()),
  /** Chat messages in the request. */
  prompt_messages: z.number().int().min(0),
  /** The assistant message as returned (tool_calls' arguments untouched). */
  message: ChatMessageSchema,
  finish_reason: z.string().nullable(),
  /** vLLM's stop_reason (the stop string or token that ended generation), when given. */
  stop_reason: z.union([z.string(), z.number(), z.null()]),
  response_id: z.string().nullable(),
  /** Model name the server answered with. */
  model: z.string().nullable(),
  /** Recent vLLM encodes its version here. */
  system_fingerprint: z.string().nullable(),
  usage: UsageSchema.nullable(),
  tokens: TurnTokensSchema.nullable(),
  /** The sampled tokens' logprobs, one per completion token. */
  logprobs: z.array(z.number()).nullable(),
  /** Why token ids or logprobs are null although they were asked for (absent, or counts disagreeing with usage). */
  capture_problem: z.string().optional(),
  /** Latency of the request that succeeded, ms. */
  latency_ms: z.number().min(0),
  /** Failed requests of this turn before it succeeded (infra: connection, timeout, 429, 5xx), with their codes. */
  retries: z.number().int().min(0),
  retry_codes: z.array(z.string()),
  /** Time spent waiting for a fleet-wide inflight slot, ms (infrastructure time, not the agent's). */
  slot_wait_ms: z.number().min(0),
  /** Indices into the result's `steps` of the actions this turn executed. */
  steps: z.array(z.number().int().min(0)),
  /** Set when the reply was malformed (no call, bad arguments, unknown tool, markup in content, blocked command). */
  format_error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Wall time of the whole turn (waiting, request, actions, bookkeeping), ms. */
  duration_ms: z.number().min(0),
});
export type TurnRecord = z.infer<typeof TurnRecordSchema>;

export const TokenTotalsSchema = z.object({
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  total_tokens: z.number().int().min(0),
});
export type TokenTotals = z.infer<typeof TokenTotalsSchema>;

/** Which policy produced the episode (never its key). */
export const PolicyRunInfoSchema = z.object({
  base_url: z.string(),
  model: z.string(),
  server_kind: z.string(),
  tool_profile: z.string(),
  /** The `tools` array every request carried (SFT exports need it). */
  tools: z.array(z.record(z.string(), z.unknown())),
});
export type PolicyRunInfo = z.infer<typeof PolicyRunInfoSchema>;
