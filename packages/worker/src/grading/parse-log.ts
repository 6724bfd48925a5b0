/**
 * From an eval log to a status map (§6.1 of trajectories-and-grading.md, SWE-bench main `grading.get_logs_eval`
 * at 7a21e057): reject logs carrying a not-applied marker or lacking the test-output markers, parse the text
 * between the markers, fall back to the whole log when that yields nothing, and reject a log that shows no run
 * or contradicts the test command's exit code (run-evidence.ts).
 */
import { parseDjango } from './django-parser.js';
import { END_TEST_OUTPUT, NOT_APPLIED_MARKERS, START_TEST_OUTPUT } from './log-markers.js';
import {
  parseMatplotlib,
  parsePytest,
  parsePytestOptions,
  parsePytestV2,
  type StatusEntries,
} from './pytest-parsers.js';
import { logRejection, type LogRejection } from './run-evidence.js';
import { parseSeaborn } from './seaborn-parser.js';
import { parseSympy } from './sympy-parser.js';
import type { ParserName, StatusMap } from './types.js';

const PARSERS: Readonly<Record<ParserName, (log: string) => StatusEntries>> = {
  pytest: parsePytest,
  pytest_options: parsePytestOptions,
  pytest_v2: parsePytestV2,
  matplotlib: parseMatplotlib,
  seaborn: parseSeaborn,
  django: parseDjango,
  sympy: parseSympy,
};

/** Run one parser over raw test output, no marker handling. Later lines overwrite earlier ones. */
export function parseTestOutput(output: string, parser: ParserName): StatusMap {
  // fromEntries defines own properties, so a test named `__proto__` stays a plain key.
  return Object.fromEntries(PARSERS[parser](output)) as StatusMap;
}

export interface TestLogReading {
  /** false: a not-applied marker was present, a test-output marker was missing, or the log was rejected. */
  applied: boolean;
  statuses: StatusMap;
  /** Set when the markers were there but the log does not describe a run (run-evidence.ts). */
  rejection?: LogRejection;
}

export function readTestLog(log: string, parser: ParserName): TestLogReading {
  if (NOT_APPLIED_MARKERS.some((marker) => log.includes(marker))) return { applied: false, statuses: {} };
  if (!log.includes(START_TEST_OUTPUT) || !log.includes(END_TEST_OUTPUT)) return { applied: false, statuses: {} };
  // Same slicing as Python's `content.split(START)[1].split(END)[0]`.
  const between = log.split(START_TEST_OUTPUT)[1]?.split(END_TEST_OUTPUT)[0] ?? '';
  let statuses = parseTestOutput(between, parser);
  if (Object.keys(statuses).length === 0) statuses = parseTestOutput(log, parser);
  const rejection = logRejection(statuses, log);
  return rejection === undefined ? { applied: true, statuses } : { applied: false, statuses: {}, rejection };
}

/** The status map of an eval log; empty when the log shows the patch or the tests did not run. */
export function parseLog(log: string, parser: ParserName): StatusMap {
  return readTestLog(log, parser).statuses;
}
