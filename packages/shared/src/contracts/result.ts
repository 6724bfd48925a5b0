/**
 * Wire contract: the one result written per (run, episode, sample). snake_case like episode.ts,
 * and `report` mirrors SWE-bench's report.json entry field for field.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors/codes.js';
import { FidelitySchema } from './fidelity.js';
import { ChatMessageSchema, PolicyRunInfoSchema, TokenTotalsSchema, TurnRecordSchema } from './turn-record.js';

const codes = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const FailureSchema = z.object({
  code: z.enum(codes),
  class: z.enum(['infra', 'model', 'input']),
  message: z.string(),
});
export type Failure = z.infer<typeof FailureSchema>;

export const StepRecordSchema = z.object({
  index: z.number().int().min(0),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** The shell line the call became; absent when the call could not be converted. */
  command: z.string().optional(),
  /** Output as kept: whole up to the configured size, else head + marker + tail. */
  output: z.string(),
  /** Size of the full output in bytes (UTF-8), before truncation. */
  output_bytes: z.number().int().min(0),
  truncated: z.boolean(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number().min(0),
  timed_out: z.boolean(),
  /** Set when the step produced an error observation (unknown tool, bad arguments, syntax error). */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Policy episodes: the turn (index into `turns`) whose tool call this step executed. */
  turn: z.number().int().min(0).optional(),
  /** Policy episodes: the id of the tool call this step executed. */
  tool_call_id: z.string().optional(),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

const TestOutcomeSchema = z.object({ success: z.array(z.string()), failure: z.array(z.string()) });

export const GradingReportSchema = z.object({
  patch_is_None: z.boolean(),
  patch_exists: z.boolean(),
  patch_successfully_applied: z.boolean(),
  resolved: z.boolean(),
  tests_status: z
    .object({
      FAIL_TO_PASS: TestOutcomeSchema,
      PASS_TO_PASS: TestOutcomeSchema,
      FAIL_TO_FAIL: TestOutcomeSchema,
      PASS_TO_FAIL: TestOutcomeSchema,
    })
    .optional(),
});
export type GradingReport = z.infer<typeof GradingReportSchema>;

export const TimingsSchema = z.object({
  queue_wait_ms: z.number().min(0),
  sandbox_acquire_ms: z.number().min(0),
  replay_ms: z.number().min(0),
  grade_ms: z.number().min(0),
  total_ms: z.number().min(0),
});
export type Timings = z.infer<typeof TimingsSchema>;

export const AttemptSchema = z.object({
  attempt: z.number().int().min(1),
  worker_id: z.string(),
  sandbox_id: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string(),
  failure: FailureSchema.nullable(),
  /** A straggler's backup copy, run alongside the attempt of the same number (the first to finish wins). */
  backup: z.boolean().optional(),
  /** The step during which the sandbox stopped answering, when it did (a step can kill its own server). */
  lost_at_step: z.number().int().min(0).optional(),
});
export type Attempt = z.infer<typeof AttemptSchema>;

/** Group membership as recorded in each result (see contracts/group.ts). */
export const GroupMembershipSchema = z.object({
  /** The group's id: the episode id all its samples share (unique within the run). */
  id: z.string(),
  /** Samples in the group when this result was committed. */
  size: z.number().int().min(1),
});
export type GroupMembership = z.infer<typeof GroupMembershipSchema>;

export const EpisodeResultSchema = z.object({
  run_id: z.string(),
  episode_id: z.string(),
  instance_id: z.string(),
  sample_index: z.number().int().min(0),
  /** completed: replayed (and graded when an eval spec was given); failed: no usable outcome (infra or input). */
  status: z.enum(['completed', 'failed']),
  /** null when not graded or failed: an infra failure must never read as reward 0. */
  resolved: z.boolean().nullable(),
  reward: z.number().nullable(),
  steps: z.array(StepRecordSchema),
  patch: z.string().nullable(),
  report: GradingReportSchema.nullable(),
  timings: TimingsSchema,
  attempts: z.array(AttemptSchema),
  failure: FailureSchema.nullable(),
  worker_id: z.string(),
  sandbox_id: z.string().nullable(),
  finished_at: z.string(),
  metadata: z.record(z.string(), z.string()).default({}),
  /** Replays: each step's replayed observation compared with the recorded one (contracts/fidelity.ts); absent otherwise. */
  fidelity: FidelitySchema.optional(),
  /**
   * Policy episodes: how the agent loop ended, in SWE-agent's vocabulary — `submitted`, or `submitted (<reason>)`
   * when it stopped early and a patch was taken all the same, or `<reason>` without a patch; reasons
   * `exit_format`, `exit_context`, `exit_cost` (turn limit), `exit_total_execution_time`, `exit_command_timeout`.
   * Absent for replays; null when the attempt failed before the loop ended.
   */
  exit_status: z.string().nullable().optional(),
  /** Policy episodes: one record per model turn. */
  turns: z.array(TurnRecordSchema).optional(),
  /** Policy episodes: usage summed over the turns. */
  tokens: TokenTotalsSchema.optional(),
  /** Policy episodes: the whole conversation as OpenAI chat messages (re-submittable as a replay; SFT data). */
  messages: z.array(ChatMessageSchema).optional(),
  /** Policy episodes: the endpoint, model and tools used. */
  policy: PolicyRunInfoSchema.optional(),
  /** The RL group this sample belongs to (all samples of this run and episode id); absent for results of unregistered jobs. */
  group: GroupMembershipSchema.optional(),
});
export type EpisodeResult = z.infer<typeof EpisodeResultSchema>;
/** A result as written (fields with defaults may be left out; readers apply them). */
export type EpisodeResultInput = z.input<typeof EpisodeResultSchema>;
