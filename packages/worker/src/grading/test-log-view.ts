/**
 * What the parser read from an eval log, as grade-instance.ts reads it and grading-details.ts explains it.
 * Its own file so that both depend on it and not on each other.
 */
import type { EvalSpec, GradingDetails } from '@rollout-fleet/shared';
import { FAIL_ONLY_REPOS, parserForRepo } from './repo-parsers.js';
import type { GradingMode } from './resolution.js';
import type { LogRejection } from './run-evidence.js';
import type { ParserName, StatusMap } from './types.js';

/** How the tests went, as grade-instance.ts read them. */
export interface TestLogView {
  parser: ParserName;
  parserSource: GradingDetails['parser_source'];
  /** The tests ran on the patched tree and printed output between the harness's markers. */
  testsRan: boolean;
  statuses: StatusMap;
  mode: GradingMode;
  /** The markers were there but the log shows no run, or contradicts the test command's exit code. */
  rejection?: LogRejection;
}

/** The parser and grading mode an eval gets, before any test ran. */
export function untestedView(spec: Pick<EvalSpec, 'repo' | 'log_parser'>): TestLogView {
  return {
    parser: spec.log_parser ?? parserForRepo(spec.repo),
    parserSource: spec.log_parser === undefined ? 'repository' : 'episode',
    testsRan: false,
    statuses: {},
    mode: FAIL_ONLY_REPOS.has(spec.repo) ? 'fail_only' : 'pass_and_fail',
  };
}
