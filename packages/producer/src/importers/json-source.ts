import { problemAt, type Problem, type RecordLocation } from '../validation/problem.js';
import { jsonErrorOffset } from './json-error-offset.js';
import { jsonNestingOverflow, MAX_NESTING_DEPTH } from './nesting-depth.js';
import type { InputFile } from './types.js';

/** A failed parse says why (`syntax`, or `depth`: valid JSON nested deeper than MAX_NESTING_DEPTH). */
export type JsonParse =
  { ok: true; value: unknown } | { ok: false; reason: 'syntax' | 'depth'; message: string; line?: number };

export interface JsonLine {
  line: number;
  value: unknown;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON-ish type names for messages: `expected object, got string`. */
export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** 1-based line of `offset` in `text` (counted, not split: files can be large). */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/**
 * The one JSON reader of the importers (files, JSONL lines, and JSON held in strings such as tool arguments).
 * Never throws: a syntax error reports its 1-based line, and valid JSON nested deeper than MAX_NESTING_DEPTH is
 * refused with the line where it gets too deep (see nesting-depth.ts for why).
 */
export function parseJsonText(text: string): JsonParse {
  const source = stripBom(text);
  let value: unknown;
  try {
    value = JSON.parse(source) as unknown;
  } catch (error) {
    // V8 quotes the whole input in some messages; keep only the reason.
    const raw = error instanceof Error ? error.message : String(error);
    const message = raw.replace(/, ".*" is not valid JSON$/s, '').replace(/ in JSON at position \d+.*$/s, '');
    const offset = jsonErrorOffset(source);
    if (offset === undefined) return { ok: false, reason: 'syntax', message };
    return { ok: false, reason: 'syntax', message, line: lineAt(source, offset) };
  }
  const deep = jsonNestingOverflow(source);
  if (deep === undefined) return { ok: true, value };
  return {
    ok: false,
    reason: 'depth',
    message: `nested deeper than ${MAX_NESTING_DEPTH} levels`,
    line: lineAt(source, deep),
  };
}

/** Message and hint for a failed parse, worded for the person who wrote the file. */
export function jsonParseText(
  parsed: { reason: 'syntax' | 'depth'; message: string },
  syntaxHint: string,
): { message: string; hint: string } {
  if (parsed.reason === 'depth') {
    return {
      message: `too deeply nested (${parsed.message})`,
      hint: 'flatten the data: episodes never need that many levels of [ ] and { }',
    };
  }
  return { message: `not valid JSON (${parsed.message})`, hint: syntaxHint };
}

/** JSONL: one value per non-blank line; a line that does not parse is a problem naming its number. */
export function parseJsonLines(file: InputFile): { records: JsonLine[]; problems: Problem[] } {
  const records: JsonLine[] = [];
  const problems: Problem[] = [];
  stripBom(file.text)
    .split('\n')
    .forEach((raw, index) => {
      const text = raw.trim();
      if (text === '') return;
      const line = index + 1;
      const parsed = parseJsonText(text);
      if (parsed.ok) {
        records.push({ line, value: parsed.value });
      } else {
        problems.push(
          problemAt(
            { file: file.path, line },
            jsonParseText(
              parsed,
              'write exactly one JSON object per line (JSONL); no trailing commas, no multi-line objects',
            ),
          ),
        );
      }
    });
  return { records, problems };
}

export function jsonSyntaxProblem(
  file: InputFile,
  parsed: { reason: 'syntax' | 'depth'; message: string; line?: number },
): Problem {
  const location = parsed.line === undefined ? { file: file.path } : { file: file.path, line: parsed.line };
  return problemAt(
    location,
    jsonParseText(parsed, 'fix the JSON syntax (a validator such as `jq . <file>` shows the spot)'),
  );
}

export function indexPath(index: number): string {
  return `$[${index}]`;
}

export function keyPath(key: string): string {
  return `$[${JSON.stringify(key)}]`;
}

export function fileBaseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

/** Lower-case extension without the dot (`traj`, `jsonl`), '' when there is none. */
export function fileExtension(path: string): string {
  const base = fileBaseName(path);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

/** `out/django__django-11099/django__django-11099.traj` → `django__django-11099` */
export function fileStem(path: string): string {
  const base = fileBaseName(path);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? base : base.slice(0, dot);
}

/** Field paths as people write them: `trajectory[3].arguments`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

export interface JsonRecord {
  value: unknown;
  location: RecordLocation;
}

/**
 * Records of a file that is either JSONL (by extension) or JSON holding a list (one record per element) or a
 * single value (returned as one record without a path).
 */
export function readJsonRecords(file: InputFile): { records: JsonRecord[]; problems: Problem[]; single: boolean } {
  const ext = fileExtension(file.path);
  if (ext === 'jsonl' || ext === 'ndjson') {
    const { records, problems } = parseJsonLines(file);
    return {
      records: records.map((r) => ({ value: r.value, location: { file: file.path, line: r.line } })),
      problems,
      single: false,
    };
  }
  const parsed = parseJsonText(file.text);
  if (!parsed.ok) return { records: [], problems: [jsonSyntaxProblem(file, parsed)], single: false };
  if (!Array.isArray(parsed.value))
    return { records: [{ value: parsed.value, location: { file: file.path } }], problems: [], single: true };
  return {
    records: parsed.value.map((value, index) => ({ value, location: { file: file.path, path: indexPath(index) } })),
    problems: [],
    single: false,
  };
}
