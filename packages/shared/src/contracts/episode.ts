/**
 * Wire contract: one rollout episode as enqueued by the producer and consumed by workers.
 * Field names are snake_case on purpose: the same JSON is written by Python trainers and
 * validated there against the generated JSON Schema (schemas/episode.schema.json), and the
 * eval fields keep SWE-bench's own names (base_commit, FAIL_TO_PASS, ...). Objects are strict: an unknown
 * key (a typo such as `trajectroy`) is an error, never silently dropped.
 */
import { z } from 'zod';
import { effectiveTemplates, unfilledPlaceholders, type TemplateValues } from './render-template.js';
import { PolicySchema } from './policy.js';
import { ToolBundleSchema } from './tool-bundle.js';

const SECOND = 1;
const MINUTE = 60 * SECOND;

/** Ids end up in Redis keys and BullMQ job ids: keep them to a safe alphabet (no ':' separators). */
export const IdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._@+\-/]+$/, 'use letters, digits and . _ @ + - / only');

export const ToolNameSchema = z.enum(['execute_bash', 'str_replace_editor']);
export type ToolName = z.infer<typeof ToolNameSchema>;

export const SandboxSpecSchema = z
  .strictObject({
    image: z
      .string()
      .min(1)
      .describe(
        'veFaaS `InstanceImageInfo.Image`; for vefaas-local an image directory name (e.g. `pyutils`) or a `file:` path.',
      ),
    command: z
      .string()
      .min(1)
      .optional()
      .describe('Start command; must start the SWE-ReX server and carry its auth token. Default: built by the worker.'),
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(8000)
      .describe('Port the SWE-ReX server listens on inside the sandbox.'),
    cpu_milli: z
      .number()
      .int()
      .min(250)
      .max(16_000)
      .default(2000)
      .describe('CPU of the sandbox, in thousandths of a core.'),
    memory_mb: z.number().int().min(512).max(131_072).default(4096).describe('Memory of the sandbox, MiB.'),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe('Environment of the bash session (and of the sandbox, `Envs`).'),
    lifetime_s: z
      .number()
      .int()
      .min(3 * MINUTE)
      .max(1440 * MINUTE)
      .default(60 * MINUTE)
      .describe('Platform lifetime (CreateSandbox Timeout), seconds; the last-resort reaper.'),
    startup_timeout_s: z
      .number()
      .positive()
      .max(3600)
      .default(180)
      .describe('How long to wait for the SWE-ReX server to answer /is_alive, seconds.'),
  })
  .describe('The sandbox the episode runs in.');
export type SandboxSpec = z.infer<typeof SandboxSpecSchema>;

/** Where the repository sits when the episode does not say (SWE-bench images). */
export const DEFAULT_REPO_DIR = '/testbed';

export const RepoDirSchema = z
  .string()
  .regex(/^\/[^\0\n\r]*$/, 'an absolute path (starting with /)')
  .refine((path) => !path.split('/').some((part) => part === '..' || part === '.'), 'no "." or ".." segments')
  .refine((path) => path === '/' || !path.endsWith('/'), 'no trailing /');

export const ToolCallSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .describe(
        'Tool name as the model called it: execute_bash | bash | str_replace_editor (others become error observations).',
      ),
    arguments: z
      .record(z.string(), z.unknown())
      .describe('Arguments as an object (a JSON string is parsed by the importers before it gets here).'),
    observation: z
      .string()
      .optional()
      .describe('The observation recorded when the trajectory was produced, for comparison; never replayed.'),
    id: z.string().optional().describe('The call id of the source record (OpenAI tool_call id), for traceability.'),
    action: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The action text the recording agent ran (SWE-agent `trajectory[].action`). When given it is replayed as it was, after the ' +
          "agent's own rewriting (the `end_of_edit` heredoc), instead of a command built from name and arguments: SWE-agent's " +
          'quoting quirks are part of what was recorded.',
      ),
    timeout_s: z.number().positive().optional().describe('Per-step timeout override, seconds.'),
  })
  .describe('One recorded tool call, replayed in order.');
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** Log parsers (docs/grading.md says which test-id format each produces). */
export const LOG_PARSERS = [
  'pytest',
  'pytest_options',
  'pytest_v2',
  'django',
  'sympy',
  'seaborn',
  'matplotlib',
] as const;
export type LogParserName = (typeof LOG_PARSERS)[number];

export const EvalSpecSchema = z
  .strictObject({
    repo: z
      .string()
      .min(1)
      .describe('The repository as `owner/name` (SWE-bench `repo`); chooses the default log parser.'),
    base_commit: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The commit the test files of `test_patch` are reset to before it is applied (SWE-bench `base_commit`).',
      ),
    test_patch: z
      .string()
      .optional()
      .describe(
        'Unified diff adding the tests (SWE-bench `test_patch`); its files are the test directives of `test_command`.',
      ),
    FAIL_TO_PASS: z
      .array(z.string())
      .default([])
      .describe(
        'Test ids that must pass after the patch (and failed before it); ids in the format of the log parser (docs/grading.md).',
      ),
    PASS_TO_PASS: z
      .array(z.string())
      .default([])
      .describe('Test ids that must keep passing; ids in the format of the log parser (docs/grading.md).'),
    test_command: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Test command run with the test files of test_patch as directives (SWE-bench `test_cmd`), e.g. `pytest -rA`.',
      ),
    install: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The repository's install step, re-run in the eval after the patch is applied and before the tests (SWE-bench spec `install`, keyed by repo and version).",
      ),
    eval_commands: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Commands run at the start of the eval, right after the environment's activation (SWE-bench spec `eval_commands`, e.g. Django's locale exports).",
      ),
    eval_script: z
      .string()
      .min(1)
      .optional()
      .describe('A complete eval script (SWE-bench v5 style); when given it replaces the generated one.'),
    log_parser: z
      .enum(LOG_PARSERS)
      .optional()
      .describe(
        'How the test log is read into test ids and statuses; default chosen from `repo` as SWE-bench does (pytest for unknown repositories). See docs/grading.md.',
      ),
    timeout_s: z
      .number()
      .positive()
      .default(30 * MINUTE)
      .describe(
        'Bounds the eval script, seconds; past it the eval is stopped, and a log that stops before the end-of-test-output marker has no test results (unresolved).',
      ),
  })
  .refine((spec) => spec.test_command !== undefined || spec.eval_script !== undefined, {
    message: 'give test_command or eval_script',
    path: ['test_command'],
  })
  .describe('How the patch is graded (SWE-bench rules, docs/grading.md); absent = not graded.');
export type EvalSpec = z.infer<typeof EvalSpecSchema>;

export const LimitsSchema = z.strictObject({
  step_timeout_s: z
    .number()
    .positive()
    .default(300)
    .describe("Default per-step timeout, seconds (the seed's per-command timeout)."),
  episode_deadline_s: z
    .number()
    .positive()
    .default(60 * MINUTE)
    .describe('Bounds one attempt end to end (sandbox start, replay, grading), seconds.'),
});

export const EpisodeSchema = z
  .strictObject({
    run_id: IdSchema.describe('The run the episode belongs to (letters, digits and . _ @ + - /).'),
    episode_id: IdSchema.describe('Unique within the run; all samples of one episode id form an RL group.'),
    instance_id: z.string().min(1).describe('The task instance (SWE-bench `instance_id`).'),
    sample_index: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Which sample of the episode this is (GRPO-style groups: 0 … n-1).'),
    sandbox: SandboxSpecSchema,
    repo_dir: RepoDirSchema.default(DEFAULT_REPO_DIR).describe(
      "Where the repository sits in the sandbox (SWE-bench images: `/testbed`; SWE-agent's own runs: `/<owner>__<repo>`). " +
        'The session starts there, tools and grading use it, and recorded absolute paths replay as they were.',
    ),
    tools: z
      .array(ToolNameSchema)
      .default(['execute_bash', 'str_replace_editor'])
      .describe('Tools the episode may call.'),
    tool_bundle: ToolBundleSchema.optional().describe(
      'The agent tool bundle the trajectory was recorded with (SWE-agent windowed tools, mini-swe-agent); absent = ours.',
    ),
    trajectory: z.array(ToolCallSchema).default([]).describe('Recorded tool calls, replayed in order.'),
    eval: EvalSpecSchema.optional(),
    model_patch: z
      .string()
      .nullable()
      .optional()
      .describe("A patch to grade instead of the sandbox's `git diff` (grading-only sweeps); null = empty prediction."),
    limits: LimitsSchema.default({ step_timeout_s: 300, episode_deadline_s: 60 * MINUTE }).describe(
      'Time limits of one attempt.',
    ),
    metadata: z
      .record(z.string(), z.string())
      .default({})
      .describe('Free-form labels carried into the result (source file, model name, ...).'),
    problem_statement: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The task as a policy reads it (SWE-bench `problem_statement`); fills `{{problem_statement}}` in the policy's templates.",
      ),
    policy: PolicySchema.optional().describe(
      "The model under training chooses each action, after the trajectory's steps when both are given.",
    ),
  })
  .superRefine((episode, ctx) => {
    const { policy } = episode;
    if (policy === undefined) return;
    if (episode.model_patch !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['model_patch'],
        message: 'a policy episode grades the patch its model produces; remove model_patch or the policy block',
      });
    }
    const values = templateValuesOf(episode);
    const templates = effectiveTemplates(policy);
    for (const which of ['system', 'instance'] as const) {
      for (const name of unfilledPlaceholders(templates[which], values)) {
        const own = policy.templates[which] !== undefined;
        ctx.addIssue({
          code: 'custom',
          path:
            name === 'problem_statement'
              ? ['problem_statement']
              : name === 'repo' || name === 'base_commit'
                ? ['eval', name]
                : ['policy', 'templates', which],
          message: `the ${own ? '' : `default ${policy.tool_profile} `}${which} template uses {{${name}}}, but the episode gives no value for it`,
        });
      }
    }
  });
/** Where the repository sits in the sandbox when the episode does not say (kept for the policy templates). */
export const DEFAULT_WORKING_DIR = DEFAULT_REPO_DIR;

/** What a policy's templates are filled with. */
export function templateValuesOf(episode: {
  instance_id: string;
  problem_statement?: string | undefined;
  eval?: { repo: string; base_commit?: string | undefined } | undefined;
  repo_dir?: string | undefined;
}): TemplateValues {
  return {
    instance_id: episode.instance_id,
    working_dir: episode.repo_dir ?? DEFAULT_WORKING_DIR,
    ...(episode.problem_statement === undefined ? {} : { problem_statement: episode.problem_statement }),
    ...(episode.eval === undefined ? {} : { repo: episode.eval.repo }),
    ...(episode.eval?.base_commit === undefined ? {} : { base_commit: episode.eval.base_commit }),
  };
}

/** An episode as accepted on the wire (defaults not yet applied). */
export type EpisodeInput = z.input<typeof EpisodeSchema>;
/** An episode after parsing, every default applied. */
export type Episode = z.output<typeof EpisodeSchema>;
