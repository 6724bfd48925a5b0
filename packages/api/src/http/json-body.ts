/**
 * Request bodies and query strings, checked against their zod contract. Everything wrong becomes a located
 * problem (`(request)`, line of a JSON syntax error, field path, a did-you-mean for a misspelt key) in one
 * INPUT_INVALID error, so a client sees all of it at once.
 */
import type { z } from 'zod';
import { formatFieldPath, parseJsonText } from '@rollout-fleet/producer';
import { RolloutError, didYouMean } from '@rollout-fleet/shared';
import type { ProblemBody } from '../contracts/common.js';

export const REQUEST_FILE = '(request)';

function problemsOf(error: z.ZodError, file: string, known: readonly string[]): ProblemBody[] {
  return error.issues.flatMap((issue): ProblemBody[] => {
    const field = formatFieldPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const guess = didYouMean(key, known);
        return {
          file,
          field: field === '' ? key : `${field}.${key}`,
          message: 'unknown field',
          hint: guess === undefined ? `remove it; known fields: ${known.join(', ')}` : `did you mean "${guess}"?`,
          code: 'INPUT_INVALID',
        };
      });
    }
    return [
      {
        file,
        ...(field === '' ? {} : { field }),
        message: issue.message,
        hint: 'fix the field and send the request again',
        code: 'INPUT_INVALID',
      },
    ];
  });
}

function knownKeys(schema: z.ZodType): string[] {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  return shape === undefined ? [] : Object.keys(shape);
}

function invalid(message: string, problems: ProblemBody[]): RolloutError {
  return new RolloutError('INPUT_INVALID', message, { details: { problems } });
}

/** Checks already-parsed input (a query object, a JSON value) against `schema`. */
export function checkInput<S extends z.ZodType>(schema: S, value: unknown, file = REQUEST_FILE): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = problemsOf(parsed.error, file, knownKeys(schema));
  throw invalid(`${problems.length} problem(s) in the request`, problems);
}

/** Parses a JSON body text and checks it against `schema`. */
export function parseJsonBody<S extends z.ZodType>(schema: S, text: string): z.output<S> {
  if (text.trim() === '')
    throw invalid('the request has no body', [
      {
        file: REQUEST_FILE,
        message: 'empty body',
        hint: 'send a JSON object (Content-Type: application/json)',
        code: 'INPUT_INVALID',
      },
    ]);
  const json = parseJsonText(text);
  if (!json.ok) {
    throw invalid('the request body is not valid JSON', [
      {
        file: REQUEST_FILE,
        ...(json.line === undefined ? {} : { line: json.line }),
        message: `not valid JSON (${json.message})`,
        hint: 'send one JSON object',
        code: 'INPUT_INVALID',
      },
    ]);
  }
  return checkInput(schema, json.value);
}
