/**
 * Wire contract: one rollout episode as enqueued by the producer and consumed by workers.
 * Field names are snake_case on purpose: the same JSON is written by Python trainers and
 * validated there against the generated JSON Schema (schemas/episode.schema.json), and the
 * eval fields keep SWE-bench's own names (base_commit, FAIL_TO_PASS, ...). Objects are strict: an unknown
 * key (a typo such as `trajectroy`) is an error, never silently dropped.
 */
import { z } from 'zod';
import { effectiveTemplates, unfilledPlaceholders, type TemplateValues } from '../policy/render-template.js';
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

export const SandboxSpecSchema = z.strictObject({
  /** veFaaS `InstanceImageInfo.Image`; for vefaas-local an image directory name or a `file:` path. */
  image: z.string().min(1),
  /** Start command; must start the SWE-ReX server and carry its auth token. Default: built by the worker. */
  command: z.string().min(1).optional(),
  port: z.number().int().min(1).max(65535).default(8000),
  cpu_milli: z.number().int().min(250).max(16_000).default(2000),
  memory_mb: z.number().int().min(512).max(131_072).default(4096),
  /** Environment of the bash session (and of the sandbox, `Envs`). */
  env: z.record(z.string(), z.string()).default({}),
  /** Platform lifetime (CreateSandbox Timeout), seconds; the last-resort reaper. */
  lifetime_s: z.number().int().min(3 * MINUTE).max(1440 * MINUTE).default(60 * MINUTE),
  /** How long to wait for the SWE-ReX server to answer /is_alive, seconds. */
  startup_timeout_s: z.number().positive().max(3600).default(180),
});
export type SandboxSpec = z.infer<typeof SandboxSpecSchema>;

/** Where the repository sits when the episode does not say (SWE-bench images). */
export const DEFAULT_REPO_DIR = '/testbed';

export const RepoDirSchema = z
  .string()
  .regex(/^\/[^\0\n\r]*$/, 'an absolute path (starting with /)')
  .refine((path) => !path.split('/').some((part) => part === '..' || part === '.'), 'no "." or ".." segments')
  .refine((path) => path === '/' || !path.endsWith('/'), 'no trailing /');

export const ToolCallSchema = z.strictObject({
  /** Tool name as the model called it: execute_bash | bash | str_replace_editor (others become error observations). */
  name: z.string().min(1),
  /** Arguments as an object (a JSON string is parsed by the importers before it gets here). */
  arguments: z.record(z.string(), z.unknown()),
  /** The observation recorded when the trajectory was produced, for comparison; never replayed. */
  observation: z.string().optional(),
  /** The call id of the source record (OpenAI tool_call id), for traceability. */
  id: z.string().optional(),
  /**
   * The action text the recording agent ran (SWE-agent `trajectory[].action`). When given it is replayed as it
   * was, after the agent's own rewriting (the `end_of_edit` heredoc), instead of a command built from name and
   * arguments: SWE-agent's quoting quirks are part of what was recorded.
   */
  action: z.string().min(1).optional(),
  /** Per-step timeout override, seconds. */
  timeout_s: z.number().positive().optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

const TestListSchema = z.array(z.string());

export const EvalSpecSchema = z.strictObject({
  repo: z.string().min(1),
  base_commit: z.string().min(1).optional(),
  test_patch: z.string().optional(),
  FAIL_TO_PASS: TestListSchema.default([]),
  PASS_TO_PASS: TestListSchema.default([]),
  /** Test command run with the test files of test_patch as directives (SWE-bench `test_cmd`), e.g. `pytest -rA`. */
  test_command: z.string().min(1).optional(),
  /** A complete eval script (SWE-bench v5 style); when given it replaces the generated one. */
  eval_script: z.string().min(1).optional(),
  /** Log parser; default chosen from `repo` as SWE-bench does. */
  log_parser: z.enum(['pytest', 'pytest_options', 'pytest_v2', 'django', 'sympy', 'seaborn', 'matplotlib']).optional(),
  timeout_s: z.number().positive().default(30 * MINUTE),
}).refine((spec) => spec.test_command !== undefined || spec.eval_script !== undefined, {
  message: 'give test_command or eval_script',
  path: ['test_command'],
});
export type EvalSpec = z.infer<typeof EvalSpecSchema>;

export const LimitsSchema = z.strictObject({
  /** Default per-step timeout, seconds (the seed's per-command timeout). */
  step_timeout_s: z.number().positive().default(300),
  /** Bounds one attempt end to end (sandbox start, replay, grading), seconds. */
  episode_deadline_s: z.number().positive().default(60 * MINUTE),
});

export const EpisodeSchema = z.strictObject({
  run_id: IdSchema,
  episode_id: IdSchema,
  instance_id: z.string().min(1),
  sample_index: z.number().int().min(0).default(0),
  sandbox: SandboxSpecSchema,
  /**
   * Where the repository sits in the sandbox (SWE-bench images: `/testbed`; SWE-agent's own runs: `/<owner>__<repo>`).
   * The session starts there, tools and grading use it, and recorded absolute paths replay as they were.
   */
  repo_dir: RepoDirSchema.default(DEFAULT_REPO_DIR),
  tools: z.array(ToolNameSchema).default(['execute_bash', 'str_replace_editor']),
  /** The agent tool bundle the trajectory was recorded with (SWE-agent windowed tools, mini-swe-agent); absent = ours. */
  tool_bundle: ToolBundleSchema.optional(),
  trajectory: z.array(ToolCallSchema).default([]),
  eval: EvalSpecSchema.optional(),
  /** A patch to grade instead of the sandbox's `git diff` (grading-only sweeps); null = empty prediction. */
  model_patch: z.string().nullable().optional(),
  limits: LimitsSchema.default({ step_timeout_s: 300, episode_deadline_s: 60 * MINUTE }),
  /** Free-form labels carried into the result (source file, model name, ...). */
  metadata: z.record(z.string(), z.string()).default({}),
  /** The task as a policy reads it (SWE-bench `problem_statement`); fills `{{problem_statement}}` in the policy's templates. */
  problem_statement: z.string().min(1).optional(),
  /** The model under training chooses each action, after the trajectory's steps when both are given (see contracts/policy.ts). */
  policy: PolicySchema.optional(),
}).superRefine((episode, ctx) => {
  const { policy } = episode;
  if (policy === undefined) return;
  if (episode.model_patch !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['model_patch'], message: 'a policy episode grades the patch its model produces; remove model_patch or the policy block' });
  }
  const values = templateValuesOf(episode);
  const templates = effectiveTemplates(policy);
  for (const which of ['system', 'instance'] as const) {
    for (const name of unfilledPlaceholders(templates[which], values)) {
      const own = policy.templates[which] !== undefined;
      ctx.addIssue({
        code: 'custom',
        path: name === 'problem_statement' ? ['problem_statement'] : name === 'repo' || name === 'base_commit' ? ['eval', name] : ['policy', 'templates', which],
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
