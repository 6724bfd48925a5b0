/**
 * pytest-family log parsers, line for line after SWE-bench main (7a21e057)
 * `swebench/harness/log_parsers/python.py` (`parse_log_pytest`, `_options`, `_v2`, `parse_log_matplotlib`):
 * since v4.1.0 the `SKIPPED [N] file:line: reason` summary is no test, and v2 keeps ids with spaces whole.
 * One deliberate difference: where the harness would store a token that is not a status word as the
 * "status" (e.g. `ERROR: file not found`), the line is dropped. Such entries can never be a test name
 * the dataset lists, so grading outcomes do not change.
 */
import { TEST_STATUSES } from '@rollout-fleet/shared';
import { pySplit } from './py-text.js';
import { isTestStatus, type TestStatus } from './types.js';

export type StatusEntries = Map<string, TestStatus>;

function startsWithStatus(line: string): boolean {
  return TEST_STATUSES.some((status) => line.startsWith(status));
}

function endsWithStatus(line: string): boolean {
  return TEST_STATUSES.some((status) => line.endsWith(status));
}

/**
 * pytest's `SKIPPED [N] path:line: reason` summary line, where `[N]` is a count, not a test (upstream main
 * `_is_skip_summary`; SKIPPED only: `PASSED [100%]` is a listed id in two pytest-dev instances).
 */
function isSkipSummary(status: string, name: string): boolean {
  return status === 'SKIPPED' && /^\[\d+\]$/.test(name);
}

/** `STATUS name ...` lines; FAILED lines lose their ` - message` separator first. */
function parseStatusFirst(line: string): [string, TestStatus] | undefined {
  const text = line.startsWith('FAILED') ? line.replaceAll(' - ', ' ') : line;
  const tokens = pySplit(text);
  const [status, name] = tokens;
  if (status === undefined || name === undefined || !isTestStatus(status) || isSkipSummary(status, name))
    return undefined;
  return [name, status];
}

/** v2's `STATUS name with spaces`: FAILED lines cut at their first ` - `, the rest of the line is the id. */
function parseStatusFirstV2(line: string): [string, TestStatus] | undefined {
  const text = line.startsWith('FAILED') ? (line.split(' - ')[0] ?? line) : line;
  const [status, ...rest] = pySplit(text);
  if (status === undefined || rest.length === 0 || !isTestStatus(status) || isSkipSummary(status, rest[0] ?? ''))
    return undefined;
  return [rest.join(' '), status];
}

export function parsePytest(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  for (const line of log.split('\n')) {
    if (!startsWithStatus(line)) continue;
    const entry = parseStatusFirst(line);
    if (entry) statuses.set(...entry);
  }
  return statuses;
}

const OPTION_RE = /(.*?)\[(.*)\]/;

/** `main[/abs/path/file]` → `main[/file]`: parametrised temp paths differ between machines. */
export function normalizeOptionName(name: string): string {
  const match = OPTION_RE.exec(name);
  if (!match) return name;
  const main = match[1] ?? '';
  let option = match[2] ?? '';
  if (option.startsWith('/') && !option.startsWith('//') && !option.includes('*')) {
    option = `/${option.split('/').at(-1) ?? ''}`;
  }
  return `${main}[${option}]`;
}

export function parsePytestOptions(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  for (const [name, status] of parsePytest(log)) statuses.set(normalizeOptionName(name), status);
  return statuses;
}

// Python `\d` is Unicode-aware; `\p{Nd}` keeps the same meaning.
const COLOUR_RE = /\[(\p{Nd}+)m/gu;
// eslint-disable-next-line no-control-regex -- removing control characters 1-31 is the point
const CONTROL_RE = /[\x01-\x1f]/g;

export function parsePytestV2(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  for (const raw of log.split('\n')) {
    const line = raw.replace(COLOUR_RE, '').replace(CONTROL_RE, '');
    if (startsWithStatus(line)) {
      const entry = parseStatusFirstV2(line);
      if (entry) statuses.set(...entry);
    } else if (endsWithStatus(line)) {
      // Older pytest prints `name STATUS`; the id is everything before the last word.
      const tokens = pySplit(line);
      const status = tokens.at(-1);
      if (tokens.length >= 2 && status !== undefined && isTestStatus(status))
        statuses.set(tokens.slice(0, -1).join(' '), status);
    }
  }
  return statuses;
}

export function parseMatplotlib(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  for (const raw of log.split('\n')) {
    const line = raw.replaceAll('MouseButton.LEFT', '1').replaceAll('MouseButton.RIGHT', '3');
    if (!startsWithStatus(line)) continue;
    const entry = parseStatusFirst(line);
    if (entry) statuses.set(...entry);
  }
  return statuses;
}
