/**
 * Wire contract: the `policy` block of an episode — the model under training chooses every action, served by an
 * OpenAI-compatible endpoint (vLLM, SGLang, or OpenAI itself). snake_case like the rest of the episode, strict
 * objects (a typo is an error), every field documented where it is declared. The key of the endpoint is never
 * carried here: `api_key_env` names the worker's environment variable that holds it.
 */
import { z } from 'zod';

const SECOND = 1;
const MINUTE = 60 * SECOND;

/**
 * Tool sets a policy may be trained on, with their schemas as the reference agents define them:
 * - `sweagent`: SWE-agent v1 function calling — `bash`, `str_replace_editor`, `submit`; one call per turn.
 * - `mini_bash`: mini-swe-agent v2 — one `bash` tool, each command in a fresh `bash -c` in the repository,
 *   several calls per turn allowed, finished by `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` (exit code 0).
 * - `seed`: the veRL + veFaaS integration's `execute_bash` + `str_replace_editor` in the persistent session;
 *   a reply without a tool call ends the episode (veRL's tool agent loop).
 */
export const TOOL_PROFILES = ['sweagent', 'mini_bash', 'seed'] as const;
export type ToolProfileName = (typeof TOOL_PROFILES)[number];

/** Which server dialect to speak: where token ids are found, which sampling extras are accepted. */
export const SERVER_KINDS = ['vllm', 'sglang', 'openai'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** Placeholders the templates may use, filled from the episode. */
export const TEMPLATE_PLACEHOLDERS = [
  'problem_statement',
  'working_dir',
  'repo',
  'instance_id',
  'base_commit',
] as const;
export type TemplatePlaceholder = (typeof TEMPLATE_PLACEHOLDERS)[number];
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The placeholders a template uses, in order of first use. */
export function templatePlaceholders(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))];
}

const TemplateSchema = z
  .string()
  .min(1)
  .superRefine((template, ctx) => {
    const unknown = templatePlaceholders(template).filter(
      (name) => !(TEMPLATE_PLACEHOLDERS as readonly string[]).includes(name),
    );
    if (unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown placeholder ${unknown.map((name) => `{{${name}}}`).join(', ')}; use ${TEMPLATE_PLACEHOLDERS.map((name) => `{{${name}}}`).join(', ')}`,
      });
    }
  });

/**
 * Sampling parameters, sent with every request. Servers apply the model's generation_config.json for anything
 * not sent, silently; so everything that changes the distribution is sent explicitly (vLLM/SGLang extras only to
 * those servers), and recorded per turn.
 */
export const SamplingSchema = z.strictObject({
  temperature: z
    .number()
    .min(0)
    .max(2)
    .describe('Sampling temperature; required on purpose: the one knob nobody should inherit by accident.'),
  top_p: z.number().gt(0).max(1).default(1).describe('Nucleus sampling; 1 = off.'),
  top_k: z.number().int().min(-1).default(-1).describe('Top-k sampling, vLLM/SGLang only; -1 = off.'),
  min_p: z.number().min(0).max(1).default(0).describe('Min-p sampling, vLLM/SGLang only; 0 = off.'),
  repetition_penalty: z.number().gt(0).max(2).default(1).describe('Repetition penalty, vLLM/SGLang only; 1 = off.'),
  presence_penalty: z.number().min(-2).max(2).default(0).describe('OpenAI presence penalty; 0 = off.'),
  frequency_penalty: z.number().min(-2).max(2).default(0).describe('OpenAI frequency penalty; 0 = off.'),
  max_completion_tokens: z
    .number()
    .int()
    .positive()
    .describe('Tokens generated per turn at most (clamped to the room left when `max_model_len` is given).'),
  seed: z
    .number()
    .int()
    .optional()
    .describe(
      'Base sampling seed: each sample is sent its own seed derived from (seed, episode_id, sample_index), recorded in its result as `policy.seed` (docs/policy.md, "Seeds").',
    ),
  stop: z.array(z.string().min(1)).max(16).optional().describe('Stop strings (at most 16).'),
});
export type Sampling = z.output<typeof SamplingSchema>;

export const PolicyLimitsSchema = z.strictObject({
  max_turns: z
    .number()
    .int()
    .positive()
    .max(10_000)
    .default(50)
    .describe("Model requests per episode (SWE-agent's per-instance call limit); reaching it ends as `exit_cost`."),
  max_format_errors: z
    .number()
    .int()
    .positive()
    .max(100)
    .default(3)
    .describe('Consecutive malformed replies (format errors, blocked commands) before `exit_format`.'),
  max_consecutive_timeouts: z
    .number()
    .int()
    .positive()
    .max(100)
    .default(3)
    .describe('Consecutive step timeouts before `exit_command_timeout`.'),
  wall_s: z
    .number()
    .positive()
    .default(30 * MINUTE)
    .describe(
      "The agent's own time, seconds: generation (successful requests) plus command execution and the loop's bookkeeping. " +
        'Waiting for an inflight slot and failed requests are infrastructure time and not counted. Exceeding it ends as ' +
        '`exit_total_execution_time`. The episode deadline still bounds the whole attempt.',
    ),
  request_timeout_s: z
    .number()
    .positive()
    .max(3600)
    .default(10 * MINUTE)
    .describe('One HTTP request to the endpoint, seconds; a hang past it is an infra failure, retried.'),
  retries: z
    .number()
    .int()
    .min(0)
    .max(100)
    .default(8)
    .describe('Retries of one turn after infra failures (connection, timeout, 429, 5xx), with exponential back-off.'),
});
export type PolicyLimits = z.output<typeof PolicyLimitsSchema>;

export const CaptureSchema = z.strictObject({
  logprobs: z.boolean().default(true).describe("Ask for the sampled tokens' logprobs (`logprobs: true`)."),
  top_logprobs: z
    .number()
    .int()
    .min(0)
    .max(20)
    .default(0)
    .describe("Alternatives per position (0–20); kept only as the sampled token's logprob in results."),
  token_ids: z
    .boolean()
    .default(true)
    .describe(
      'Ask vLLM/SGLang for prompt and completion token ids (`return_token_ids`, SGLang also `return_prompt_token_ids`).',
    ),
});
export type Capture = z.output<typeof CaptureSchema>;

/** Request fields the loop owns; `extra_body` may not override them. */
export const RESERVED_BODY_KEYS = [
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'stream',
  'stream_options',
  'n',
  'logprobs',
  'top_logprobs',
  'return_token_ids',
  'return_prompt_token_ids',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'seed',
  'stop',
  'repetition_penalty',
  'presence_penalty',
  'frequency_penalty',
] as const;

/** Environment variable names under these prefixes belong to rollout-fleet's configuration (unknown ones are errors). */
const OWNED_ENV_PREFIXES = ['RF_', 'VEFAAS_'];

export const PolicySchema = z.strictObject({
  base_url: z
    .string()
    .url()
    .refine((value) => /^https?:\/\//i.test(value), 'use an http:// or https:// URL')
    .refine(
      (value) => !/\/chat\/completions\/?$/.test(value),
      'give the API root (…/v1), not the /chat/completions path',
    )
    .describe(
      'The OpenAI-compatible API root, e.g. `http://10.0.0.5:8000/v1` (requests go to `<base_url>/chat/completions`).',
    ),
  model: z.string().min(1).describe('Served model name (vLLM `--served-model-name`).'),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name (letters, digits, _)')
    .refine(
      (name) => !OWNED_ENV_PREFIXES.some((prefix) => name.startsWith(prefix)),
      'RF_* and VEFAAS_* are rollout-fleet settings; use another name, e.g. POLICY_API_KEY',
    )
    .optional()
    .describe(
      "Name of the worker's environment variable holding the endpoint's key (sent as `Authorization: Bearer`); the key itself is never in the episode.",
    ),
  server_kind: z
    .enum(SERVER_KINDS)
    .default('vllm')
    .describe('The server dialect: where token ids are found, which sampling extras are sent.'),
  tool_profile: z
    .enum(TOOL_PROFILES)
    .default('sweagent')
    .describe(
      'The tool set the model is given: `sweagent` (SWE-agent v1 function calling), `mini_bash` (mini-swe-agent v2 bash), `seed` (execute_bash + str_replace_editor).',
    ),
  templates: z
    .strictObject({
      system: TemplateSchema.optional().describe('The system message template.'),
      instance: TemplateSchema.optional().describe('The first user message template (the task).'),
    })
    .prefault({})
    .describe(
      "Prompt templates; omitted ones are the profile's defaults. Placeholders: {{problem_statement}}, {{working_dir}}, {{repo}}, {{instance_id}}, {{base_commit}}.",
    ),
  sampling: SamplingSchema.describe('Sampling parameters, sent with every request and recorded per turn.'),
  max_model_len: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      'The served context length (vLLM `--max-model-len`): turns are clamped to the room left, and a full context ends as `exit_context`.',
    ),
  limits: PolicyLimitsSchema.prefault({}).describe('When the agent loop ends.'),
  capture: CaptureSchema.prefault({}).describe(
    'What the server is asked to return for training (logprobs, token ids).',
  ),
  tool_choice: z
    .enum(['auto', 'required'])
    .default('auto')
    .describe('`required` makes vLLM use structured outputs (always parseable); `auto` lets the model answer in text.'),
  parallel_tool_calls: z
    .boolean()
    .optional()
    .describe("Several calls per reply; default: the profile's (sweagent and seed: false, mini_bash: true)."),
  extra_body: z
    .record(z.string(), z.unknown())
    .default({})
    .superRefine((body, ctx) => {
      const reserved = Object.keys(body).filter((key) => (RESERVED_BODY_KEYS as readonly string[]).includes(key));
      if (reserved.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${reserved.join(', ')} ${reserved.length === 1 ? 'is' : 'are'} set by the policy block itself (sampling, capture, tool_choice); move ${reserved.length === 1 ? 'it' : 'them'} there`,
        });
      }
    })
    .describe('More request fields, sent as they are (e.g. `{"chat_template_kwargs": {"enable_thinking": false}}`).'),
});
/** A policy block as accepted on the wire (defaults not yet applied). */
export type PolicyInput = z.input<typeof PolicySchema>;
export type Policy = z.output<typeof PolicySchema>;
