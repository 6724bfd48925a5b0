/**
 * Wire contract of the run endpoints (v1): submit, status, cancel, retry. A submission carries the same options
 * as `rollout-fleet submit`; the episodes come as native records (`episodes`), as files in any import format
 * the CLI reads (`files`, `predictions`), or as a JSONL body with the options in the query string.
 */
import { z } from 'zod';
import { IdSchema } from '@rollout-fleet/shared';

const INPUT_FORMATS = [
  'native',
  'swe-agent-traj',
  'openai-messages',
  'swebench-dataset',
  'swebench-predictions',
] as const;

/** Options of a submission (`rollout-fleet submit` flags, snake_case). */
export const SubmitOptionsSchema = z.strictObject({
  run_id: IdSchema.describe(
    'The run (job id = run + episode + sample). Submitting the same run again enqueues only what is missing.',
  ),
  samples: z
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(1)
    .describe('Rollouts per episode: one RL group of this many samples per episode id.'),
  image: z.string().min(1).optional().describe('Sandbox image for records that name none.'),
  image_template: z
    .string()
    .min(1)
    .optional()
    .describe('Image per instance, e.g. `swebench/sweb.eval.x86_64.{instance_id_1776}:latest`.'),
  instance: z
    .string()
    .min(1)
    .optional()
    .describe('Instance id for a single-episode file (.traj) whose name does not give it.'),
  gold: z.boolean().default(false).describe('Also grade every dataset instance with its gold patch.'),
  test_command: z
    .string()
    .min(1)
    .optional()
    .describe('Test command for dataset instances (default: per repository, as SWE-bench).'),
  format: z.enum(INPUT_FORMATS).optional().describe('Read every file as this format instead of detecting it.'),
  force: z.boolean().default(false).describe('Run again the episodes that already have a result.'),
  resume: z
    .boolean()
    .default(false)
    .describe(
      'Submit into a cancelled run (otherwise refused, 409 RUN_CANCELLED): clear its cancel and run its cancelled episodes again; finished ones are kept.',
    ),
  dry_run: z.boolean().default(false).describe('Validate only; enqueue nothing.'),
  announce: z
    .boolean()
    .default(false)
    .describe(
      "Validate and announce the run's sandboxes for warm pools; enqueue nothing (`submit --announce`). An RL trainer announces its next batch while it trains on this one; submitting the run later (without `announce`) enqueues it and retires the announcement.",
    ),
  announce_ttl_s: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600)
    .describe('Seconds an announcement stays if the run is never submitted (`submit --announce-ttl`).'),
});
export type SubmitOptions = z.output<typeof SubmitOptionsSchema>;

export const InputFileSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(1000)
    .describe(
      'File name as problems should cite it; its extension drives format detection (.jsonl, .json, .traj, .yaml).',
    ),
  content: z.string().describe('The whole file as text.'),
});

export const SubmitRequestSchema = SubmitOptionsSchema.extend({
  episodes: z
    .array(z.record(z.string(), z.unknown()))
    .optional()
    .describe(
      'Native episode records (schemas/episode.schema.json; `run_id` may be left out). Problems cite them as `episodes:$[i]`.',
    ),
  files: z.array(InputFileSchema).optional().describe('Input files in any format the CLI accepts.'),
  predictions: z
    .array(InputFileSchema)
    .optional()
    .describe('SWE-bench predictions (preds.json / .jsonl) to grade against the dataset files.'),
  policy: z
    .union([z.record(z.string(), z.unknown()), InputFileSchema])
    .optional()
    .describe(
      "A policy block for every episode (`submit --policy`; docs/policy.md): the object itself, or a JSON/YAML file. Problems in it are cited as `policy.json` (or the file's name).",
    ),
}).refine((body) => (body.episodes?.length ?? 0) + (body.files?.length ?? 0) > 0, {
  message: 'give the episodes: `episodes` (native records) or `files` (any import format)',
  path: ['episodes'],
});
export type SubmitRequest = z.output<typeof SubmitRequestSchema>;

/** The same options as query parameters, for a JSONL body (`Content-Type: application/x-ndjson`). */
export const SubmitQuerySchema = z.strictObject({
  run_id: SubmitOptionsSchema.shape.run_id,
  samples: z.coerce.number().int().min(1).max(10_000).default(1),
  image: SubmitOptionsSchema.shape.image,
  image_template: SubmitOptionsSchema.shape.image_template,
  instance: SubmitOptionsSchema.shape.instance,
  gold: z.stringbool().default(false),
  test_command: SubmitOptionsSchema.shape.test_command,
  format: SubmitOptionsSchema.shape.format,
  force: z.stringbool().default(false),
  resume: z.stringbool().default(false),
  dry_run: z.stringbool().default(false),
  announce: z.stringbool().default(false),
  announce_ttl_s: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .default(3600),
});

export const SubmitResponseSchema = z.object({
  run_id: z.string(),
  episodes: z.number().int().describe('Episodes (samples) in the submission, after validation.'),
  enqueued: z.number().int(),
  skipped_done: z.number().int().describe('Already had a stored result (and were not forced).'),
  skipped_queued: z.number().int().describe('Already had a job in the queue.'),
  dry_run: z.boolean(),
  warnings: z
    .array(z.string())
    .describe(
      'What the submission allows but probably did not mean, e.g. RL groups decoded at temperature 0 (all samples alike); the run was submitted all the same.',
    ),
  announced: z
    .object({
      specs: z.number().int().describe('Kinds of sandbox (image, size, tools…) announced.'),
      sandboxes: z.number().int().describe('Sandboxes announced (one per episode sample).'),
      live_workers: z.number().int().describe('Workers alive on this Redis and prefix when the announcement was made.'),
      warm_pool_workers: z
        .number()
        .int()
        .describe('Of those, the workers that keep a warm pool (`RF_WARM_POOL_MAX` > 0): only they pre-warm.'),
      warm_pool_max: z
        .number()
        .int()
        .describe(
          'The largest `RF_WARM_POOL_MAX` among live workers: warm sandboxes the fleet keeps at most (0: none).',
        ),
      warning: z
        .string()
        .optional()
        .describe(
          'Present when the announcement will pre-warm nothing now: no worker is running (it waits for one), or none of the live workers keeps a warm pool (set `RF_WARM_POOL_MAX` on the workers). The announcement is recorded all the same.',
        ),
    })
    .optional()
    .describe('Present when the submission announced instead of enqueueing (`announce`).'),
});
export type SubmitResponse = z.infer<typeof SubmitResponseSchema>;

export const RunStatusSchema = z.object({
  run_id: z.string(),
  created_at: z.string().nullable(),
  cancelled: z.boolean(),
  total: z.number().int(),
  done: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  resolved: z.number().int(),
  duplicates: z.number().int().describe('Second completions of one sample, counted and dropped.'),
  active: z.number().int(),
  retrying: z.number().int(),
  waiting: z.number().int(),
  resolved_rate: z.number().nullable(),
  throughput_per_s: z.number().nullable(),
  eta_s: z.number().nullable(),
  groups: z.object({
    total: z.number().int().describe('RL groups (episode ids) in the run.'),
    completed: z
      .number()
      .int()
      .describe('Groups whose every sample has a result (each emitted once on the groups stream).'),
  }),
});
export type RunStatusBody = z.infer<typeof RunStatusSchema>;

export const CancelResponseSchema = z.object({
  run_id: z.string(),
  removed: z.number().int().describe('Waiting jobs removed.'),
  active: z.number().int().describe('Running episodes; workers stop them.'),
});

export const RetryResponseSchema = z.object({
  run_id: z.string(),
  retried: z.number().int().describe('Failed episodes enqueued again.'),
  missing_payload: z
    .number()
    .int()
    .describe('Failed episodes whose job payload is gone (submit the file again with force).'),
});
