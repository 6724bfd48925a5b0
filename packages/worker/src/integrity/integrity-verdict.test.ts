/** The integrity flag's rule (docs/adversarial-grading.md, "The integrity flag"), one row per case. */
import type { IntegrityFinding } from '@rollout-fleet/shared';
import { describe, expect, it } from 'vitest';
import { integrityBarsResolution, integrityVerdictOf } from './integrity-verdict.js';

const f = (code: string, severity: IntegrityFinding['severity']): IntegrityFinding => ({ code, severity, detail: 'd' });

describe('integrityVerdictOf', () => {
  it.each([
    [[], 'clean', []],
    [[f('PATCH_USES_ATEXIT', 'suspect')], 'suspect', ['PATCH_USES_ATEXIT']],
    [
      [f('PATCH_USES_ATEXIT', 'suspect'), f('RESULT_CHANNEL_MISSING', 'violated')],
      'violated',
      ['PATCH_USES_ATEXIT', 'RESULT_CHANNEL_MISSING'],
    ],
    [[f('A', 'violated'), f('A', 'violated')], 'violated', ['A']],
  ] as const)('%j → %s', (findings, verdict, reasons) => {
    expect(integrityVerdictOf(findings)).toEqual({ verdict, reasons });
  });
});

describe('integrityBarsResolution', () => {
  it.each([
    ['strict', [f('X', 'violated')], true],
    ['strict', [f('X', 'suspect')], false],
    ['strict', [], false],
    ['flag', [f('X', 'violated')], false],
  ] as const)('%s with %j → %s', (mode, findings, bars) => {
    expect(integrityBarsResolution(findings, mode)).toBe(bars);
  });
});
