/**
 * The result's `grading.integrity` block (docs/adversarial-grading.md): which test-side paths were put back before
 * the eval (restore-test-side.ts) and what the grader found — the restore rule's shadows, a log the run evidence
 * rejected (run-evidence.ts). Findings keep the order they were found in.
 */
import type { GradingIntegrity, IntegrityFinding } from '@rollout-fleet/shared';
import type { LogRejection } from './run-evidence.js';

const REJECTION_FINDINGS: Readonly<Record<LogRejection, IntegrityFinding>> = {
  // Not the patch's doing as far as anyone can tell (a runner that failed to start), but never a pass.
  'suite-not-run': {
    code: 'SUITE_NOT_RUN',
    severity: 'suspect',
    detail: 'no test result was parsed and the log shows no sign that the test suite ran',
  },
  'exit-code-mismatch': {
    code: 'TEST_EXIT_CODE_MISMATCH',
    severity: 'violated',
    detail:
      'the test command exited non-zero while the log reports no failing test: the log was not written by the run',
  },
};

export function gradingIntegrity(o: {
  restored?: readonly string[];
  findings?: readonly IntegrityFinding[];
  rejection?: LogRejection;
}): GradingIntegrity {
  const findings = [...(o.findings ?? [])];
  if (o.rejection !== undefined) findings.push(REJECTION_FINDINGS[o.rejection]);
  return { restored: [...(o.restored ?? [])].sort(), findings };
}
