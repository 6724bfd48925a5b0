/**
 * What the integrity findings do to a grade (docs/adversarial-grading.md, "The integrity flag"): the patch
 * scanner's `suspect` findings join the eval's; a timed-out eval is never resolved; under `strict` a `violated`
 * finding makes the grade unresolved, under `flag` it is only recorded. The result's flag (integrity-verdict.ts)
 * is read from the same findings.
 */
import type { SandboxGrade } from '../grading/grade-in-sandbox.js';
import { integrityBarsResolution, type IntegrityMode } from './integrity-verdict.js';
import { scanPatch } from './patch-scanner.js';

export function judgeIntegrity(grade: SandboxGrade, mode: IntegrityMode): SandboxGrade {
  const before = grade.details.integrity;
  const findings = [...(before?.findings ?? []), ...scanPatch(grade.patch)];
  const details = { ...grade.details, integrity: { restored: before?.restored ?? [], findings } };
  const barred = grade.testsTimedOut || integrityBarsResolution(findings, mode);
  if (!barred || !grade.report.resolved) return { ...grade, details };
  return { ...grade, details, report: { ...grade.report, resolved: false }, resolution: 'RESOLVED_NO' };
}
