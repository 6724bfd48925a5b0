/**
 * Wire contract of the HTTP API (v1), shared parts: the error body every non-2xx answer carries, and the
 * located input problem (file, line or JSON path, field) that validation errors list. snake_case throughout,
 * like the episode and result contracts, so Python clients see one naming style.
 */
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '@rollout-fleet/shared';

const codes = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const ProblemSchema = z.object({
  file: z.string().describe('The input file (its name as sent), or `(request)` / `(options)` for the request itself.'),
  line: z.number().int().min(1).optional().describe('1-based line of a JSONL record (or of a JSON syntax error).'),
  path: z.string().optional().describe('JSON path of the record inside the file, e.g. `$[3]`.'),
  field: z.string().optional().describe('The offending field inside the record, e.g. `trajectory[3].arguments`.'),
  message: z.string(),
  hint: z.string().describe('What to do about it.'),
  code: z.enum(['INPUT_INVALID', 'INPUT_DUPLICATE', 'INPUT_TOO_LARGE']),
});
export type ProblemBody = z.infer<typeof ProblemSchema>;

export const ApiErrorSchema = z.object({
  error: z.object({
    code: z.enum(codes).describe('Stable code from the one error table (packages/shared/src/errors/codes.ts).'),
    class: z.enum(['infra', 'model', 'input']),
    retryable: z.boolean().describe('Whether sending the same request again may succeed.'),
    message: z.string(),
    hint: z.string(),
    problems: z
      .array(ProblemSchema)
      .optional()
      .describe('Every input problem found (validation errors); nothing was enqueued.'),
    did_you_mean: z.array(z.string()).optional().describe('Known ids closest to an unknown one.'),
  }),
});
export type ApiErrorBody = z.infer<typeof ApiErrorSchema>;
