/** Django `runtests.py --verbosity 2` log parser after SWE-bench v4.1.0 `parse_log_django`. */
import type { StatusEntries } from './pytest-parsers.js';
import { PY_WHITESPACE_CLASS, pySplit, pyStrip } from './py-text.js';

const PASS_SUFFIXES = [' ... ok', ' ... OK', ' ...  OK'];
const VERSION_TEST = '--version is equivalent to version';
// Exclusive fix the harness carries for django__django-7188 (migration output on the test's line).
const DJANGO_7188_PREFIX = 'Applying sites.0002_alter_domain_unique...test_no_migrations';

/*
 * Python's three re.MULTILINE patterns, translated so that `^`/`$` see only `\n` as a line break (JS `m`
 * also breaks on `\r`), `.` excludes only `\n`, `\s` is Python's whitespace set, and `(?s:.*?)` (not
 * available in Node 20) becomes `[\s\S]*?`. A test whose `... ok` is pushed to a later line by output
 * that itself contains ` ... ` would otherwise be credited to the wrong name.
 */
const BOL = '(?<![^\\n])';
const EOL = '(?![^\\n])';
const WS = `[${PY_WHITESPACE_CLASS}]`;
const MULTILINE_PASS_PATTERNS = [
  new RegExp(
    `${BOL}([^\\n]*?)${WS}\\.\\.\\.${WS}Testing against Django installed in ([\\s\\S]*?) silenced\\)\\.\\nok${EOL}`,
    'g',
  ),
  new RegExp(`${BOL}([^\\n]*?)${WS}\\.\\.\\.${WS}Internal Server Error: \\/([^\\n]*)\\/\\nok${EOL}`, 'g'),
  new RegExp(`${BOL}([^\\n]*?)${WS}\\.\\.\\.${WS}System check identified no issues \\(0 silenced\\)\\nok${EOL}`, 'g'),
];

function beforeFirst(text: string, separator: string): string {
  return text.split(separator)[0] ?? '';
}

export function parseDjango(log: string): StatusEntries {
  const statuses: StatusEntries = new Map();
  let prevTest: string | undefined;
  for (const raw of log.split('\n')) {
    let line = pyStrip(raw);
    if (line.includes(VERSION_TEST)) statuses.set(VERSION_TEST, 'PASSED');
    // Remembered so that an `ok` printed after extra output is credited to this test.
    if (line.includes(' ... ')) prevTest = beforeFirst(line, ' ... ');

    for (const suffix of PASS_SUFFIXES) {
      if (!line.endsWith(suffix)) continue;
      if (pyStrip(line).startsWith(DJANGO_7188_PREFIX)) {
        const at = line.indexOf('...');
        line = pyStrip(line.slice(at + 3));
      }
      statuses.set(line.slice(0, line.lastIndexOf(suffix)), 'PASSED');
      break;
    }
    if (line.includes(' ... skipped')) statuses.set(beforeFirst(line, ' ... skipped'), 'SKIPPED');
    if (line.endsWith(' ... FAIL')) statuses.set(beforeFirst(line, ' ... FAIL'), 'FAILED');
    // `FAIL: name` / `ERROR: name`: the harness raises IndexError on a bare `FAIL:`; such lines are skipped.
    if (line.startsWith('FAIL:')) {
      const name = pySplit(line)[1];
      if (name !== undefined) statuses.set(pyStrip(name), 'FAILED');
    }
    if (line.endsWith(' ... ERROR')) statuses.set(beforeFirst(line, ' ... ERROR'), 'ERROR');
    if (line.startsWith('ERROR:')) {
      const name = pySplit(line)[1];
      if (name !== undefined) statuses.set(pyStrip(name), 'ERROR');
    }
    if (line.startsWith('ok') && prevTest !== undefined) statuses.set(prevTest, 'PASSED');
  }

  for (const pattern of MULTILINE_PASS_PATTERNS) {
    for (const match of log.matchAll(pattern)) statuses.set(match[1] ?? '', 'PASSED');
  }
  return statuses;
}
