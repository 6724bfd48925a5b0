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
  code: z.enum(codes).describe('Stable error code (packages/shared/src/errors/codes.ts).'),
  class: z.enum(['infra', 'model', 'input']).describe('Whose doing: `infra` is retried (null reward if it persists), `model` is graded, `input` is the episode\'s own fault (not retried).'),
  message: z.string().describe('What happened, for a human (no secrets).'),
});
export type Failure = z.infer<typeof FailureSchema>;

export const StepRecordSchema = z.object({
  index: z.number().int().min(0).describe('Position of the step in the episode, from 0.'),
  tool: z.string().describe('The tool called.'),
  args: z.record(z.string(), z.unknown()).describe('The call\'s arguments as given.'),
  command: z.string().optional().describe('The shell line the call became; absent when the call could not be converted.'),
  output: z.string().describe('Output as kept: whole up to the configured size, else head + marker + tail.'),
  output_bytes: z.number().int().min(0).describe('Size of the full output in bytes (UTF-8), before truncation.'),
  truncated: z.boolean().describe('Whether `output` was cut to head + marker + tail.'),
  exit_code: z.number().int().nullable().describe('Exit code of the command; null when it has none (timed out, error observation).'),
  duration_ms: z.number().min(0).describe('Wall time of the step, ms.'),
  timed_out: z.boolean().describe('Whether the step ran past its timeout.'),
  error: z.object({
    code: z.string().describe('Stable error code.'),
    message: z.string().describe('The error observation\'s text.'),
  }).optional().describe('Set when the step produced an error observation (unknown tool, bad arguments, syntax error).'),
  turn: z.number().int().min(0).optional().describe('Policy episodes: the turn (index into `turns`) whose tool call this step executed.'),
  tool_call_id: z.string().optional().describe('Policy episodes: the id of the tool call this step executed.'),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

const TestOutcomeSchema = z.object({
  success: z.array(z.string()).describe('Listed tests that PASSED or XFAILed (fail-only JavaScript repositories: not FAILED).'),
  failure: z.array(z.string()).describe('Listed tests that FAILED, ERRORed or are absent from the parsed log; SKIPPED tests are in neither list.'),
});

export const GradingReportSchema = z.object({
  patch_is_None: z.boolean().describe('SWE-bench: the prediction had no patch (`model_patch: None`); nothing was graded.'),
  patch_exists: z.boolean().describe('SWE-bench: a non-empty patch was given.'),
  patch_successfully_applied: z.boolean().describe('SWE-bench: the patch applied and the eval produced test output between its markers.'),
  resolved: z.boolean().describe('SWE-bench: every FAIL_TO_PASS and PASS_TO_PASS test succeeded (none in a `failure` list).'),
  tests_status: z
    .object({
      FAIL_TO_PASS: TestOutcomeSchema.describe('The episode\'s FAIL_TO_PASS tests.'),
      PASS_TO_PASS: TestOutcomeSchema.describe('The episode\'s PASS_TO_PASS tests.'),
      FAIL_TO_FAIL: TestOutcomeSchema.describe('Not used by SWE-bench\'s rule (always empty lists).'),
      PASS_TO_FAIL: TestOutcomeSchema.describe('Not used by SWE-bench\'s rule (always empty lists).'),
    })
    .optional()
    .describe('Per-category outcome of the listed tests; absent when the tests did not run.'),
});
export type GradingReport = z.infer<typeof GradingReportSchema>;

export const TimingsSchema = z.object({
  queue_wait_ms: z.number().min(0).describe('From enqueue to the start of the attempt that produced this result, ms.'),
  sandbox_acquire_ms: z.number().min(0).describe('Waiting for and starting the sandbox, ms.'),
  replay_ms: z.number().min(0).describe('Running the steps (replay or policy loop), ms.'),
  grade_ms: z.number().min(0).describe('Grading (patch extraction, apply, eval), ms.'),
  total_ms: z.number().min(0).describe('The whole attempt, ms.'),
});
export type Timings = z.infer<typeof TimingsSchema>;

export const AttemptSchema = z.object({
  attempt: z.number().int().min(1).describe('Attempt number, from 1.'),
  worker_id: z.string().describe('The worker that ran it.'),
  sandbox_id: z.string().nullable().describe('The sandbox it ran in; null when none was acquired.'),
  started_at: z.string().describe('ISO 8601.'),
  ended_at: z.string().describe('ISO 8601.'),
  failure: FailureSchema.nullable().describe('Why the attempt failed; null when it succeeded.'),
  backup: z.boolean().optional().describe('A straggler\'s backup copy, run alongside the attempt of the same number (the first to finish wins).'),
  lost_at_step: z.number().int().min(0).optional().describe('The step during which the sandbox stopped answering, when it did (a step can kill its own server).'),
});
export type Attempt = z.infer<typeof AttemptSchema>;

/** Group membership as recorded in each result (see contracts/group.ts). */
export const GroupMembershipSchema = z.object({
  id: z.string().describe('The group\'s id: the episode id all its samples share (unique within the run).'),
  size: z.number().int().min(1).describe('Samples in the group when this result was committed.'),
});
export type GroupMembership = z.infer<typeof GroupMembershipSchema>;

export const EpisodeResultSchema = z.object({
  run_id: z.string().describe('The episode\'s run.'),
  episode_id: z.string().describe('The episode\'s id.'),
  instance_id: z.string().describe('The episode\'s task instance.'),
  sample_index: z.number().int().min(0).describe('The episode\'s sample index.'),
  status: z.enum(['completed', 'failed']).describe('completed: replayed (and graded when an eval spec was given); failed: no usable outcome (infra or input).'),
  resolved: z.boolean().nullable().describe('null when not graded or failed: an infra failure must never read as reward 0.'),
  reward: z.number().nullable().describe('The reward for RL: RF_REWARD_RESOLVED (default 1) when resolved, RF_REWARD_UNRESOLVED (default 0) when not; null when not graded or failed.'),
  steps: z.array(StepRecordSchema).describe('One record per executed step.'),
  patch: z.string().nullable().describe('The patch that was graded (`git diff` of the sandbox, or the episode\'s model_patch); null = none.'),
  report: GradingReportSchema.nullable().describe('SWE-bench report.json entry; null when not graded.'),
  timings: TimingsSchema.describe('Where the time went.'),
  attempts: z.array(AttemptSchema).describe('Every attempt, in order, including the one that produced this result.'),
  failure: FailureSchema.nullable().describe('failed results: why; completed results: a model-caused problem it was graded with; else null.'),
  worker_id: z.string().describe('The worker that wrote the result.'),
  sandbox_id: z.string().nullable().describe('The sandbox the steps ran in; null when none.'),
  finished_at: z.string().describe('ISO 8601.'),
  metadata: z.record(z.string(), z.string()).default({}).describe('The episode\'s metadata, carried over.'),
  fidelity: FidelitySchema.optional().describe('Replays: each step\'s replayed observation compared with the recorded one (docs/fidelity.md); absent otherwise.'),
  exit_status: z.string().nullable().optional().describe(
    'Policy episodes: how the agent loop ended, in SWE-agent\'s vocabulary — `submitted`, or `submitted (<reason>)` when it '
      + 'stopped early and a patch was taken all the same, or `<reason>` without a patch; reasons `exit_format`, `exit_context`, '
      + '`exit_cost` (turn limit), `exit_total_execution_time`, `exit_command_timeout`. Absent for replays; null when the attempt '
      + 'failed before the loop ended.',
  ),
  turns: z.array(TurnRecordSchema).optional().describe('Policy episodes: one record per model turn.'),
  tokens: TokenTotalsSchema.optional().describe('Policy episodes: usage summed over the turns.'),
  messages: z.array(ChatMessageSchema).optional().describe('Policy episodes: the whole conversation as OpenAI chat messages (re-submittable as a replay; SFT data).'),
  policy: PolicyRunInfoSchema.optional().describe('Policy episodes: the endpoint, model and tools used.'),
  group: GroupMembershipSchema.optional().describe('The RL group this sample belongs to (all samples of this run and episode id); absent for results of unregistered jobs.'),
});
export type EpisodeResult = z.infer<typeof EpisodeResultSchema>;
/** A result as written (fields with defaults may be left out; readers apply them). */
export type EpisodeResultInput = z.input<typeof EpisodeResultSchema>;
