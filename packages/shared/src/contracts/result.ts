/**
 * Wire contract: the one result written per (run, episode, sample). snake_case like episode.ts,
 * and `report` mirrors SWE-bench's report.json entry field for field.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../errors/codes.js';
import { LOG_PARSERS } from './episode.js';
import { FidelitySchema } from './fidelity.js';
import { ChatMessageSchema, PolicyRunInfoSchema, TokenTotalsSchema, TurnRecordSchema } from './turn-record.js';

const codes = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const FailureSchema = z.object({
  code: z.enum(codes).describe('Stable error code (packages/shared/src/errors/codes.ts).'),
  class: z
    .enum(['infra', 'model', 'input'])
    .describe(
      "Whose doing: `infra` is retried (null reward if it persists), `model` is graded, `input` is the episode's own fault (not retried).",
    ),
  message: z.string().describe('What happened, for a human (no secrets).'),
});
export type Failure = z.infer<typeof FailureSchema>;

export const StepRecordSchema = z.object({
  index: z.number().int().min(0).describe('Position of the step in the episode, from 0.'),
  tool: z.string().describe('The tool called.'),
  args: z.record(z.string(), z.unknown()).describe("The call's arguments as given."),
  command: z
    .string()
    .optional()
    .describe('The shell line the call became; absent when the call could not be converted.'),
  output: z.string().describe('Output as kept: whole up to the configured size, else head + marker + tail.'),
  output_bytes: z.number().int().min(0).describe('Size of the full output in bytes (UTF-8), before truncation.'),
  truncated: z.boolean().describe('Whether `output` was cut to head + marker + tail.'),
  exit_code: z
    .number()
    .int()
    .nullable()
    .describe('Exit code of the command; null when it has none (timed out, error observation).'),
  duration_ms: z.number().min(0).describe('Wall time of the step, ms.'),
  timed_out: z.boolean().describe('Whether the step ran past its timeout.'),
  error: z
    .object({
      code: z.string().describe('Stable error code.'),
      message: z.string().describe("The error observation's text."),
    })
    .optional()
    .describe('Set when the step produced an error observation (unknown tool, bad arguments, syntax error).'),
  turn: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Policy episodes: the turn (index into `turns`) whose tool call this step executed.'),
  tool_call_id: z.string().optional().describe('Policy episodes: the id of the tool call this step executed.'),
});
export type StepRecord = z.infer<typeof StepRecordSchema>;

const TestOutcomeSchema = z.object({
  success: z
    .array(z.string())
    .describe('Listed tests that PASSED or XFAILed (fail-only JavaScript repositories: not FAILED).'),
  failure: z
    .array(z.string())
    .describe(
      'Listed tests that FAILED, ERRORed or are absent from the parsed log; SKIPPED tests are in neither list.',
    ),
});

export const GradingReportSchema = z.object({
  patch_is_None: z
    .boolean()
    .describe('SWE-bench: the prediction had no patch (`model_patch: None`); nothing was graded.'),
  patch_exists: z.boolean().describe('SWE-bench: a non-empty patch was given.'),
  patch_successfully_applied: z
    .boolean()
    .describe('SWE-bench: the patch applied and the eval produced test output between its markers.'),
  resolved: z
    .boolean()
    .describe('SWE-bench: every FAIL_TO_PASS and PASS_TO_PASS test succeeded (none in a `failure` list).'),
  tests_status: z
    .object({
      FAIL_TO_PASS: TestOutcomeSchema.describe("The episode's FAIL_TO_PASS tests."),
      PASS_TO_PASS: TestOutcomeSchema.describe("The episode's PASS_TO_PASS tests."),
      FAIL_TO_FAIL: TestOutcomeSchema.describe("Not used by SWE-bench's rule (always empty lists)."),
      PASS_TO_FAIL: TestOutcomeSchema.describe("Not used by SWE-bench's rule (always empty lists)."),
    })
    .optional()
    .describe('Per-category outcome of the listed tests; absent when the tests did not run.'),
});
export type GradingReport = z.infer<typeof GradingReportSchema>;

/** SWE-bench `TestStatus` values, as the log parsers report them. */
export const TEST_STATUSES = ['PASSED', 'FAILED', 'SKIPPED', 'ERROR', 'XFAIL'] as const;

/** What a listed test that the parser did not find is told; docs/grading.md explains the id formats. */
export const TEST_NOT_FOUND_HINT = 'not found in the test log — check the id format for this parser';

export const GradedTestSchema = z.object({
  id: z.string().describe('The test id as listed in the episode.'),
  list: z.enum(['FAIL_TO_PASS', 'PASS_TO_PASS']).describe('The episode list the id comes from.'),
  status: z
    .enum(TEST_STATUSES)
    .nullable()
    .describe('The status the parser read for this id from the eval log; null when the id is not in the parsed log.'),
  outcome: z
    .enum(['success', 'failure', 'neither'])
    .describe(
      'How the SWE-bench rule counted it: PASSED/XFAIL success, FAILED/ERROR/absent failure, SKIPPED a failure in FAIL_TO_PASS and a success in PASS_TO_PASS (SWE-bench 5.x).',
    ),
  hint: z
    .string()
    .optional()
    .describe(
      `Set when the tests ran but the id is not in the parsed log: "${TEST_NOT_FOUND_HINT}", with the format the parser produces.`,
    ),
  similar: z
    .array(z.string())
    .optional()
    .describe(
      "Parsed test ids that share this id's test name, when it was not found (at most 3): usually the id the episode meant.",
    ),
});
export type GradedTest = z.infer<typeof GradedTestSchema>;

/**
 * One thing the grader found that the patch could have caused (docs/adversarial-grading.md): a stable `code`
 * (SCREAMING_SNAKE) and what was seen.
 */
export const IntegrityFindingSchema = z.object({
  code: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]*$/)
    .describe('Stable reason code, e.g. `RESULT_CHANNEL_MISSING`, `PATCH_USES_OS_EXIT` (docs/adversarial-grading.md).'),
  severity: z
    .enum(['suspect', 'violated'])
    .describe('`violated`: the eval cannot be trusted (reward 0 under RF_INTEGRITY=strict); `suspect`: worth a look.'),
  detail: z.string().describe('What was seen, for the person reading it.'),
});
export type IntegrityFinding = z.infer<typeof IntegrityFindingSchema>;

/** What the grader did and found to keep the eval out of the patch's reach. */
export const GradingIntegritySchema = z.object({
  restored: z
    .array(z.string())
    .describe('Test-side paths put back to base_commit + test_patch before the eval (repository-relative, sorted).'),
  findings: z.array(IntegrityFindingSchema).describe('Everything the grader found, in the order it found it.'),
});
export type GradingIntegrity = z.infer<typeof GradingIntegritySchema>;

/** The flag a trainer can act on, on every result and training record. */
export const IntegrityVerdictSchema = z.object({
  verdict: z
    .enum(['clean', 'suspect', 'violated'])
    .describe('`violated` when any finding is; else `suspect` when any finding is; else `clean`.'),
  reasons: z.array(z.string()).describe('The codes of the findings behind the verdict, without repeats.'),
});
export type IntegrityVerdict = z.infer<typeof IntegrityVerdictSchema>;

/**
 * How a grade was reached, for the person reading it (docs/grading.md): the parser, what it found in the eval
 * log, each listed test's status, and the log itself (bounded). The verdict is `report`; this explains it.
 */
export const GradingDetailsSchema = z.object({
  parser: z.enum(LOG_PARSERS).describe('The log parser used.'),
  parser_source: z
    .enum(['episode', 'repository'])
    .describe(
      "`episode`: eval.log_parser; `repository`: the default for eval.repo (SWE-bench's table; pytest for repositories it does not know).",
    ),
  tests_ran: z
    .boolean()
    .describe("The eval ran on the patched tree and its test output was found between the harness's markers."),
  timed_out: z.boolean().describe('The eval ran past eval.timeout_s and was stopped.'),
  tests_parsed: z
    .number()
    .int()
    .min(0)
    .describe(
      'Test results the parser found in the eval log (0 when the tests did not run). 0 with tests_ran means the parser does not fit the log.',
    ),
  tests: z.array(GradedTestSchema).describe("Every FAIL_TO_PASS and PASS_TO_PASS test, in the episode's order."),
  problem: z
    .string()
    .nullable()
    .describe(
      'What to look at first when the grade is not what was expected (no patch, patch did not apply, no test output, zero tests parsed, listed tests not found, timeout); null when every listed test was found.',
    ),
  log: z
    .string()
    .describe(
      'The eval log (apply step and test output) as kept: whole up to the step output limit (RF_STEP_OUTPUT_LIMIT_BYTES), else head + marker + tail.',
    ),
  log_bytes: z.number().int().min(0).describe('Size of the full eval log in bytes (UTF-8), before truncation.'),
  log_truncated: z.boolean().describe('Whether `log` was cut to head + marker + tail.'),
  integrity: GradingIntegritySchema.optional().describe(
    "What was restored and found to keep the eval out of the patch's reach; absent on results written before it existed.",
  ),
  eval_script: z
    .string()
    .optional()
    .describe(
      "The eval script the grader ran (SWE-bench's eval.sh); absent when no eval ran (no patch, the patch did not apply) and on results written before it existed.",
    ),
  eval_output_offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "Where, in bytes of the full eval log, the eval script's own output (SWE-bench's test_output.txt) begins; what precedes it is the patch-apply step (SWE-bench's run_instance.log). 0 when the patch was not applied first (in-place grading).",
    ),
});
export type GradingDetails = z.infer<typeof GradingDetailsSchema>;

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
  backup: z
    .boolean()
    .optional()
    .describe("A straggler's backup copy, run alongside the attempt of the same number (the first to finish wins)."),
  lost_at_step: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The step during which the sandbox stopped answering, when it did (a step can kill its own server).'),
  lost_after_model: z
    .boolean()
    .optional()
    .describe(
      'The attempt\'s sandbox (or its session) was lost after the model\'s commands had run (docs/adversarial-grading.md, "Never 0 for infra"); false: lost before any ran. Absent when no sandbox was lost.',
    ),
  lost_in: z
    .enum(['setup', 'step', 'settle', 'extract'])
    .optional()
    .describe(
      'Where the sandbox was lost: before the steps, during a step, while the shell settled, or while the patch was taken.',
    ),
  platform_cause: z
    .string()
    .optional()
    .describe(
      'The platform named its own cause for the loss (a gateway 5xx, a failed instance): infra, whatever ran before.',
    ),
});
export type Attempt = z.infer<typeof AttemptSchema>;

/** Where a worker wrote the episode's whole logs and patch (RF_ARTIFACTS_DIR; docs/grading.md). */
export const ResultArtifactsSchema = z.object({
  root: z.string().describe('RF_ARTIFACTS_DIR as the worker that wrote the files saw it.'),
  path: z
    .string()
    .describe("The directory of this result's files, relative to `root`: `<run>/<episode>/<sample>/attempt-<n>-<id>`."),
  files: z
    .array(z.string())
    .describe(
      'The files written, relative to `path`: `eval.log` (the whole eval log), `patch.diff`, `eval.sh`, `steps/<index>.txt` (each whole step output); secrets masked as in the result.',
    ),
});
export type ResultArtifacts = z.infer<typeof ResultArtifactsSchema>;

/** Group membership as recorded in each result (see contracts/group.ts). */
export const GroupMembershipSchema = z.object({
  id: z.string().describe("The group's id: the episode id all its samples share (unique within the run)."),
  size: z.number().int().min(1).describe('Samples in the group when this result was committed.'),
});
export type GroupMembership = z.infer<typeof GroupMembershipSchema>;

export const EpisodeResultSchema = z.object({
  run_id: z.string().describe("The episode's run."),
  episode_id: z.string().describe("The episode's id."),
  instance_id: z.string().describe("The episode's task instance."),
  sample_index: z.number().int().min(0).describe("The episode's sample index."),
  status: z
    .enum(['completed', 'failed'])
    .describe(
      'completed: replayed (and graded when an eval spec was given); failed: no usable outcome (infra or input).',
    ),
  resolved: z
    .boolean()
    .nullable()
    .describe('null when not graded or failed: an infra failure must never read as reward 0.'),
  reward: z
    .number()
    .nullable()
    .describe(
      'The reward for RL: RF_REWARD_RESOLVED (default 1) when resolved, RF_REWARD_UNRESOLVED (default 0) when not; null when not graded or failed.',
    ),
  steps: z.array(StepRecordSchema).describe('One record per executed step.'),
  patch: z
    .string()
    .nullable()
    .describe(
      "The patch that was graded (`git diff` of the sandbox, or the episode's model_patch); null = none. The episode's secrets in it read `***` " +
        '(graded unmasked; docs/policy.md, "Secrets in observations").',
    ),
  report: GradingReportSchema.nullable().describe('SWE-bench report.json entry; null when not graded.'),
  grading: GradingDetailsSchema.optional().describe(
    'How the grade was reached (parser, tests parsed, per-test status, the eval log); present whenever `report` is, absent on results written before it existed.',
  ),
  integrity: IntegrityVerdictSchema.optional().describe(
    "The grade's integrity flag (docs/adversarial-grading.md): from `grading.integrity.findings` when graded; absent on results written before it existed.",
  ),
  timings: TimingsSchema.describe('Where the time went.'),
  attempts: z.array(AttemptSchema).describe('Every attempt, in order, including the one that produced this result.'),
  failure: FailureSchema.nullable().describe(
    'failed results: why; completed results: a model-caused problem it was graded with; else null.',
  ),
  worker_id: z.string().describe('The worker that wrote the result.'),
  sandbox_id: z.string().nullable().describe('The sandbox the steps ran in; null when none.'),
  finished_at: z.string().describe('ISO 8601.'),
  metadata: z.record(z.string(), z.string()).default({}).describe("The episode's metadata, carried over."),
  fidelity: FidelitySchema.optional().describe(
    "Replays: each step's replayed observation compared with the recorded one (docs/fidelity.md); absent otherwise.",
  ),
  exit_status: z
    .string()
    .nullable()
    .optional()
    .describe(
      "Policy episodes: how the agent loop ended, in SWE-agent's vocabulary — `submitted`, or `submitted (<reason>)` when it " +
        'stopped early and a patch was taken all the same, or `<reason>` without a patch; reasons `exit_format`, `exit_context`, ' +
        '`exit_cost` (turn limit), `exit_total_execution_time`, `exit_command_timeout`, `exit_environment_error` (the model broke ' +
        'its shell beyond repair). Absent for replays; null when the attempt ' +
        'failed before the loop ended.',
    ),
  turns: z.array(TurnRecordSchema).optional().describe('Policy episodes: one record per model turn.'),
  tokens: TokenTotalsSchema.optional().describe('Policy episodes: usage summed over the turns.'),
  messages: z
    .array(ChatMessageSchema)
    .optional()
    .describe(
      'Policy episodes: the whole conversation as OpenAI chat messages (re-submittable as a replay; SFT data).',
    ),
  policy: PolicyRunInfoSchema.optional().describe('Policy episodes: the endpoint, model and tools used.'),
  artifacts: ResultArtifactsSchema.optional().describe(
    'The whole logs and patch of the attempt, as files (set when the worker has RF_ARTIFACTS_DIR); the result keeps them only up to its limits.',
  ),
  group: GroupMembershipSchema.optional().describe(
    'The RL group this sample belongs to (all samples of this run and episode id); absent for results of unregistered jobs.',
  ),
});
export type EpisodeResult = z.infer<typeof EpisodeResultSchema>;
/** A result as written (fields with defaults may be left out; readers apply them). */
export type EpisodeResultInput = z.input<typeof EpisodeResultSchema>;
