/**
 * The result's integrity flag (docs/adversarial-grading.md, "The integrity flag"): `violated` when any finding
 * is, else `suspect` when there is any finding, else `clean`; the reasons are the findings' codes, once each,
 * in the order found. `RF_INTEGRITY=strict` (the default) turns `violated` into reward 0; `flag` only records it.
 */
import type { IntegrityFinding, IntegrityVerdict } from '@rollout-fleet/shared';

export type IntegrityMode = 'strict' | 'flag';

export function integrityVerdictOf(findings: readonly IntegrityFinding[]): IntegrityVerdict {
  const reasons = [...new Set(findings.map((f) => f.code))];
  if (findings.some((f) => f.severity === 'violated')) return { verdict: 'violated', reasons };
  return { verdict: findings.length > 0 ? 'suspect' : 'clean', reasons };
}

/** Whether the findings bar the grade from counting as resolved under `mode`. */
export function integrityBarsResolution(findings: readonly IntegrityFinding[], mode: IntegrityMode): boolean {
  return mode === 'strict' && findings.some((f) => f.severity === 'violated');
}
