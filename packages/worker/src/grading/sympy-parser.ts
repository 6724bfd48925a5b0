/** sympy `bin/test` log parser after SWE-bench v4.1.0 `parse_log_sympy`. */
import type { StatusEntries } from './pytest-parsers.js';
import { pySplit, pyStrip } from './py-text.js';

// `(_*) (.*)\.py:(.*) (_*)` without DOTALL: Python `.` excludes only `\n`, JS `.` also `\r` and U+2028/9.
const FAILURE_HEADER_RE = /(_*) ([^\n]*)\.py:([^\n]*) (_*)/g;

export function parseSympy(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  for (const match of log.matchAll(FAILURE_HEADER_RE)) {
    statuses.set(`${match[2] ?? ''}.py:${match[3] ?? ''}`, 'FAILED');
  }
  for (const raw of log.split('\n')) {
    const line = pyStrip(raw);
    if (!line.startsWith('test_')) continue;
    const name = pySplit(line)[0] ?? '';
    if (line.endsWith(' E')) statuses.set(name, 'ERROR');
    if (line.endsWith(' F')) statuses.set(name, 'FAILED');
    if (line.endsWith(' ok')) statuses.set(name, 'PASSED');
  }
  return statuses;
}
