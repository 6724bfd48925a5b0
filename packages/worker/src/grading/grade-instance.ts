/**
 * One instance's grade: the report.json entry (SWE-bench v4.1.0 `grading.get_eval_report` with
 * tests_status included) plus the resolution and the two rates the worker may turn into a reward.
 */
import type { EvalSpec, GradingReport, ResolutionStatus } from '@rollout-fleet/shared';
import { readTestLog } from './parse-log.js';
import { evaluateTests, resolutionOf, successRate } from './resolution.js';
import { untestedView, type TestLogView } from './test-log-view.js';

export interface GradeInstanceInput {
  instanceId: string;
  /** The eval script's output (`test_output.txt`), possibly with a timeout notice appended. */
  log: string;
  eval: Pick<EvalSpec, 'repo' | 'FAIL_TO_PASS' | 'PASS_TO_PASS' | 'log_parser'>;
  /** The model patch; null is SWE-bench's `model_patch: None` (nothing is graded). */
  patch: string | null;
  /** Whether the apply-patch step succeeded; false grades like a log with `>>>>> Patch Apply Failed`. */
  patchApplied: boolean;
}

export interface InstanceGrade {
  /** The report.json entry for `instanceId`. */
  report: GradingReport;
  resolution: ResolutionStatus;
  /** 0 when nothing was graded (null patch, patch not applied, no test output). */
  f2pRate: number;
  p2pRate: number;
  /** What the parser read from the log, for the result's `grading` block (grading-details.ts). */
  view: TestLogView;
}

export function gradeInstance(input: GradeInstanceInput): InstanceGrade {
  const report: GradingReport = {
    patch_is_None: false,
    patch_exists: false,
    patch_successfully_applied: false,
    resolved: false,
  };
  const view = untestedView(input.eval);
  const { parser, mode } = view;
  const notGraded = { resolution: 'RESOLVED_NO', f2pRate: 0, p2pRate: 0, view } as const;
  if (input.patch === null) return { report: { ...report, patch_is_None: true }, ...notGraded };
  report.patch_exists = true;
  if (!input.patchApplied) return { report, ...notGraded };

  const reading = readTestLog(input.log, parser);
  if (reading.rejection !== undefined) {
    // The test command ran and printed between the markers; for a suite that shows no run, the listed tests'
    // hints (id formats) still help: the parser may be the wrong one.
    const testsRan = reading.rejection === 'suite-not-run';
    return { report, ...notGraded, view: { ...view, testsRan, rejection: reading.rejection } };
  }
  if (!reading.applied) return { report, ...notGraded };
  report.patch_successfully_applied = true;

  const testsStatus = evaluateTests({
    statuses: reading.statuses,
    failToPass: input.eval.FAIL_TO_PASS,
    passToPass: input.eval.PASS_TO_PASS,
    mode,
  });
  const resolution = resolutionOf(testsStatus);
  return {
    report: { ...report, resolved: resolution === 'RESOLVED_FULL', tests_status: testsStatus },
    resolution,
    f2pRate: successRate(testsStatus.FAIL_TO_PASS),
    p2pRate: successRate(testsStatus.PASS_TO_PASS),
    view: { ...view, testsRan: true, statuses: reading.statuses },
  };
}
