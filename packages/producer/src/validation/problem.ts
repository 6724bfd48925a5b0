import { RolloutError, type ErrorCode } from '@rollout-fleet/shared';

/** The input failure codes a problem can carry (all `class: input`, never retried; see codes.ts). */
export type ProblemCode = Extract<ErrorCode, 'INPUT_INVALID' | 'INPUT_DUPLICATE' | 'INPUT_TOO_LARGE'>;

/** Where a record came from: a file, plus the JSONL line or the JSON path of the record inside it. */
export interface RecordLocation {
  file: string;
  /** 1-based line of a JSONL record (or of a JSON syntax error). */
  line?: number;
  /** JSON path of the record inside the file, e.g. `$[3]` or `$["django__django-11099"]`. */
  path?: string;
}

/**
 * One thing wrong with the inputs, phrased for the person who wrote them: where (file, line or path),
 * which field, what is wrong, what to do. Problems are collected, never thrown, so one run reports all of them.
 */
export interface Problem extends RecordLocation {
  /** The offending field inside the record, as a path like `trajectory[3].arguments`. */
  field?: string;
  message: string;
  hint: string;
  code: ProblemCode;
}

export interface ProblemInit {
  field?: string;
  message: string;
  hint: string;
  code?: ProblemCode;
}

/** Longest message or field a problem shows; the rest is elided. */
const MAX_PROBLEM_TEXT = 400;

/**
 * Messages quote the input (ids, keys, values); a 50 MB instance id must not become a 50 MB line on the terminal
 * (nor a copy per problem in memory), so quoted text is cut here, once for every importer.
 */
function clipped(text: string): string {
  if (text.length <= MAX_PROBLEM_TEXT) return text;
  // Never cut a surrogate pair in two.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(MAX_PROBLEM_TEXT - 1)) ? MAX_PROBLEM_TEXT - 1 : MAX_PROBLEM_TEXT;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

export function problemAt(location: RecordLocation, init: ProblemInit): Problem {
  const problem: Problem = {
    file: location.file,
    message: clipped(init.message),
    hint: init.hint,
    code: init.code ?? 'INPUT_INVALID',
  };
  if (location.line !== undefined) problem.line = location.line;
  if (location.path !== undefined) problem.path = clipped(location.path);
  if (init.field !== undefined && init.field !== '') problem.field = clipped(init.field);
  return problem;
}

/** `episodes.jsonl:12`, `episodes.json:$[2]`, `preds.json` */
export function formatLocation(location: RecordLocation): string {
  let text = location.file;
  if (location.line !== undefined) text += `:${location.line}`;
  if (location.path !== undefined) text += `:${location.path}`;
  return text;
}

/**
 * One human line, e.g.
 * `episodes.jsonl:12: trajectory[3].arguments: expected object, got string — give arguments as an object or a JSON string`
 */
export function formatProblem(problem: Problem): string {
  const field = problem.field === undefined ? '' : `${problem.field}: `;
  return `${formatLocation(problem)}: ${field}${problem.message} — ${problem.hint}`;
}

/** For callers that stop at the first report: one error carrying every problem (code of the first). */
export function problemsToError(problems: readonly Problem[]): RolloutError {
  const first = problems[0];
  const code: ProblemCode = first?.code ?? 'INPUT_INVALID';
  const lines = problems.map(formatProblem);
  return new RolloutError(code, `${problems.length} input problem(s):\n${lines.join('\n')}`, {
    details: { problems: problems.map((p) => ({ ...p })) },
  });
}
