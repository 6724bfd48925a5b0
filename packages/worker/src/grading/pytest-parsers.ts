/**
 * pytest-family log parsers, line for line after SWE-bench v4.1.0
 * `swebench/harness/log_parsers/python.py` (`parse_log_pytest`, `_options`, `_v2`, `parse_log_matplotlib`).
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

/** `STATUS name ...` lines; FAILED lines lose their ` - message` separator first. */
function parseStatusFirst(line: string): [string, TestStatus] | undefined {
  const text = line.startsWith('FAILED') ? line.replaceAll(' - ', ' ') : line;
  const tokens = pySplit(text);
  const [status, name] = tokens;
  if (status === undefined || name === undefined || !isTestStatus(status)) return undefined;
  return [name, status];
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
      const entry = parseStatusFirst(line);
      if (entry) statuses.set(...entry);
    } else if (endsWithStatus(line)) {
      // Older pytest prints `name STATUS`.
      const [name, status] = pySplit(line);
      if (name !== undefined && status !== undefined && isTestStatus(status)) statuses.set(name, status);
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
