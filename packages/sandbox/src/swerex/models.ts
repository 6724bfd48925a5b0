/**
 * Wire contract: SWE-ReX 1.4 request/response models (swerex-protocol.md §4), field names as on the wire.
 * Request schemas fill every default so the client always sends every field, discriminators included
 * (`session_type`, `action_type`: omitting them is a 422 `union_tag_not_found`). Response schemas accept the
 * server's full models and default anything a compatible server might leave out.
 * `*Input` types are what callers pass (defaults optional); the plain types are the complete wire form.
 */
import { z } from 'zod';

const NAME_DEFAULT = 'default';

export const CreateBashSessionRequestSchema = z.object({
  /** Files to `source` after the shell starts (they often reset PS1). */
  startup_source: z.array(z.string()).default([]),
  session: z.string().default(NAME_DEFAULT),
  session_type: z.literal('bash').default('bash'),
  /** Seconds to wait for the first prompt. */
  startup_timeout: z.number().positive().default(1.0),
});
export type CreateBashSessionRequest = z.output<typeof CreateBashSessionRequestSchema>;
export type CreateBashSessionRequestInput = z.input<typeof CreateBashSessionRequestSchema>;

export const CreateBashSessionResponseSchema = z.object({
  output: z.string().default(''),
  session_type: z.literal('bash').default('bash'),
});
export type CreateBashSessionResponse = z.output<typeof CreateBashSessionResponseSchema>;

export const BashCheckSchema = z.enum(['silent', 'raise', 'ignore']);
export type BashCheck = z.output<typeof BashCheckSchema>;

export const BashActionSchema = z.object({
  command: z.string(),
  session: z.string().default(NAME_DEFAULT),
  /** Seconds; `null` waits forever (and the HTTP call then has no timeout of its own). */
  timeout: z.number().positive().nullable().default(null),
  is_interactive_command: z.boolean().default(false),
  is_interactive_quit: z.boolean().default(false),
  check: BashCheckSchema.default('raise'),
  error_msg: z.string().default(''),
  /** Extra regular expressions that also end the wait. */
  expect: z.array(z.string()).default([]),
  action_type: z.literal('bash').default('bash'),
});
export type BashAction = z.output<typeof BashActionSchema>;
export type BashActionInput = z.input<typeof BashActionSchema>;

export const BashInterruptActionSchema = z.object({
  session: z.string().default(NAME_DEFAULT),
  /** Seconds per Ctrl-C attempt. */
  timeout: z.number().positive().default(0.2),
  n_retry: z.number().int().min(0).default(3),
  expect: z.array(z.string()).default([]),
  action_type: z.literal('bash_interrupt').default('bash_interrupt'),
});
export type BashInterruptAction = z.output<typeof BashInterruptActionSchema>;
export type BashInterruptActionInput = z.input<typeof BashInterruptActionSchema>;

export const BashObservationSchema = z.object({
  output: z.string().default(''),
  exit_code: z.number().int().nullable().default(null),
  failure_reason: z.string().default(''),
  expect_string: z.string().default(''),
  session_type: z.literal('bash').default('bash'),
});
export type BashObservation = z.output<typeof BashObservationSchema>;

export const CloseBashSessionRequestSchema = z.object({
  session: z.string().default(NAME_DEFAULT),
  session_type: z.literal('bash').default('bash'),
});
export type CloseBashSessionRequest = z.output<typeof CloseBashSessionRequestSchema>;
export type CloseBashSessionRequestInput = z.input<typeof CloseBashSessionRequestSchema>;

export const CloseBashSessionResponseSchema = z.object({
  session_type: z.literal('bash').default('bash'),
});
export type CloseBashSessionResponse = z.output<typeof CloseBashSessionResponseSchema>;

export const CommandSchema = z.object({
  /** argv list, or a string (a string only makes sense with `shell: true`). */
  command: z.union([z.string(), z.array(z.string())]),
  /** Seconds; `null` = no limit. */
  timeout: z.number().positive().nullable().default(null),
  shell: z.boolean().default(false),
  check: z.boolean().default(false),
  error_msg: z.string().default(''),
  /** Replaces the whole environment (pass PATH yourself); `null` inherits the server's. */
  env: z.record(z.string(), z.string()).nullable().default(null),
  cwd: z.string().nullable().default(null),
  merge_output_streams: z.boolean().default(false),
});
export type Command = z.output<typeof CommandSchema>;
export type CommandInput = z.input<typeof CommandSchema>;

export const CommandResponseSchema = z.object({
  stdout: z.string().default(''),
  stderr: z.string().default(''),
  exit_code: z.number().int().nullable().default(null),
});
export type CommandResponse = z.output<typeof CommandResponseSchema>;
/** Name used by the brief/issue for the `/execute` response. */
export type ExecuteResponse = CommandResponse;

export const ReadFileRequestSchema = z.object({
  path: z.string(),
  encoding: z.string().nullable().default(null),
  errors: z.string().nullable().default(null),
});
export type ReadFileRequest = z.output<typeof ReadFileRequestSchema>;
export type ReadFileRequestInput = z.input<typeof ReadFileRequestSchema>;

export const ReadFileResponseSchema = z.object({ content: z.string() });
export type ReadFileResponse = z.output<typeof ReadFileResponseSchema>;

export const WriteFileRequestSchema = z.object({ content: z.string(), path: z.string() });
export type WriteFileRequest = z.output<typeof WriteFileRequestSchema>;

export const EmptyResponseSchema = z.object({});
export type WriteFileResponse = z.output<typeof EmptyResponseSchema>;
export type UploadResponse = z.output<typeof EmptyResponseSchema>;
export type CloseResponse = z.output<typeof EmptyResponseSchema>;

export const IsAliveResponseSchema = z.object({
  is_alive: z.boolean(),
  message: z.string().default(''),
});
export type IsAliveResponse = z.output<typeof IsAliveResponseSchema>;

/** Body of every HTTP 511 answer (swerex-protocol.md §5). */
export const SwerexExceptionBodySchema = z.object({
  swerexception: z.object({
    message: z.string(),
    class_path: z.string(),
    traceback: z.string().default(''),
    extra_info: z.record(z.string(), z.unknown()).default({}),
  }),
});
export type SwerexExceptionBody = z.output<typeof SwerexExceptionBodySchema>;
