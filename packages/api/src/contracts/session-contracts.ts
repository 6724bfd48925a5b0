/**
 * Wire contract of remote sessions (v1): the seed's AgentEnv over HTTP. A session is one sandbox from the
 * fleet's sandbox supply (fleet caps, create rate, leases, reaper), started with its tools installed; calls
 * run commands or tool calls in its one bash session, read and write files; it ends when deleted, when idle
 * longer than its idle timeout, at the end of its lifetime, or when its sandbox is lost.
 */
import { z } from 'zod';
import { ToolNameSchema } from '@rollout-fleet/shared';

const MINUTE = 60;
const DAY = 24 * 60 * MINUTE;

export const SessionCreateSchema = z.strictObject({
  image: z.string().min(1).optional().describe('Sandbox image (default: RF_SANDBOX_IMAGE).'),
  tools: z
    .array(ToolNameSchema)
    .default(['execute_bash', 'str_replace_editor'])
    .describe("Tools installed on the session's PATH."),
  env: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'environment names are shell identifiers'), z.string())
    .default({})
    .describe('Environment of the bash session (values are never shown back).'),
  lifetime_s: z
    .number()
    .int()
    .min(60)
    .max(DAY)
    .default(60 * MINUTE)
    .describe('The session ends this long after it started, seconds.'),
  idle_timeout_s: z
    .number()
    .int()
    .min(5)
    .max(DAY)
    .optional()
    .describe('Ends after this long without a call (default RF_SESSION_IDLE_S), seconds.'),
  startup_timeout_s: z
    .number()
    .positive()
    .max(3600)
    .optional()
    .describe('Wait for the sandbox to come alive (default RF_STARTUP_TIMEOUT_S), seconds.'),
  step_timeout_s: z
    .number()
    .positive()
    .max(DAY)
    .optional()
    .describe('Default per-call timeout (default RF_STEP_TIMEOUT_S), seconds.'),
  cpu_milli: z.number().int().min(250).max(16_000).optional(),
  memory_mb: z.number().int().min(512).max(131_072).optional(),
  wait_s: z
    .number()
    .positive()
    .max(DAY)
    .optional()
    .describe(
      'Longest wait for a sandbox when the fleet is at its caps or create rate (default RF_SANDBOX_ACQUIRE_TIMEOUT_S); then 503 SANDBOX_ACQUIRE_TIMEOUT.',
    ),
  label: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Free-form label carried on the sandbox lease (e.g. the trainer's run), for operators."),
});
export type SessionCreate = z.output<typeof SessionCreateSchema>;

export const SessionSchema = z.object({
  id: z.string(),
  sandbox_id: z.string(),
  image: z.string(),
  tools: z.array(ToolNameSchema),
  env: z
    .record(z.string(), z.string())
    .describe(
      'The session environment as shown: names kept, every value `[REDACTED]` (the shared job-data redaction).',
    ),
  created_at: z.string(),
  expires_at: z.string().describe("End of the session's lifetime."),
  last_used_at: z.string(),
  idle_timeout_s: z.number(),
  step_timeout_s: z.number(),
  busy: z.boolean().describe('A call is running (calls of one session run one at a time, in order).'),
});
export type SessionBody = z.infer<typeof SessionSchema>;

export const SessionRunSchema = z
  .strictObject({
    command: z
      .string()
      .min(1)
      .optional()
      .describe('A bash command line, run in the session as typed (`cd` and `export` persist).'),
    tool_call: z
      .strictObject({
        name: z.string().min(1),
        arguments: z
          .union([z.record(z.string(), z.unknown()), z.string()])
          .describe('An object, or the JSON string a model produced.'),
      })
      .optional()
      .describe(
        "A tool call as a model makes it (execute_bash, str_replace_editor), turned into its command line by SWE-agent's rules.",
      ),
    timeout_s: z
      .number()
      .positive()
      .max(DAY)
      .optional()
      .describe("Interrupts the call after this long (default: the session's step_timeout_s)."),
  })
  .refine((body) => (body.command === undefined) !== (body.tool_call === undefined), {
    message: 'give exactly one of command and tool_call',
    path: ['command'],
  });
export type SessionRun = z.output<typeof SessionRunSchema>;

export const SessionRunResultSchema = z.object({
  output: z
    .string()
    .describe(
      'The whole observation: command output, or the error observation of a malformed call, a syntax error or a timeout.',
    ),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number(),
  timed_out: z.boolean(),
  command: z.string().optional().describe('The shell line that ran (for a tool call, the line it became).'),
  error: z
    .object({ code: z.string(), message: z.string() })
    .optional()
    .describe(
      "Set when the call produced an error observation (TOOL_ERROR, SWEREX_BASH_SYNTAX, STEP_TIMEOUT): the model's doing, not a failure of the session.",
    ),
});
export type SessionRunResult = z.infer<typeof SessionRunResultSchema>;

export const InstallToolsSchema = z.strictObject({
  tools: z
    .array(ToolNameSchema)
    .min(1)
    .describe("Tools to upload and put on the session's PATH (the seed's install_tools)."),
});

export const FileWriteSchema = z.strictObject({
  path: z
    .string()
    .startsWith('/', 'give an absolute path')
    .describe('Absolute path in the sandbox (parents are created).'),
  content: z.string(),
});

export const FileReadQuerySchema = z.strictObject({
  path: z.string().startsWith('/', 'give an absolute path'),
});

export const FileContentSchema = z.object({ path: z.string(), content: z.string() });
