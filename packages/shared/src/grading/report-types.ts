/** Types of SWE-bench grading outputs, shared so the producer can format results without importing the worker. */
import type { GradingReport } from '../contracts/result.js';

/** SWE-bench `ResolvedStatus`: only RESOLVED_FULL counts as `resolved: true`. */
export type ResolutionStatus = 'RESOLVED_FULL' | 'RESOLVED_PARTIAL' | 'RESOLVED_NO';

/** `tests_status` of a report: FAIL_TO_PASS / PASS_TO_PASS / FAIL_TO_FAIL / PASS_TO_FAIL outcomes. */
export type TestsStatus = NonNullable<GradingReport['tests_status']>;
export type TestOutcome = TestsStatus['FAIL_TO_PASS'];

/** The content of one `report.json`: a single entry keyed by instance id. */
export type SwebenchReportFile = Record<string, GradingReport>;
