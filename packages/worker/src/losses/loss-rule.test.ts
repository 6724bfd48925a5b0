/**
 * The "never 0 for infra" rule in both directions (docs/adversarial-grading.md, "Never 0 for infra"), one row per
 * case of the table there.
 */
import { RolloutError, type Attempt } from '@rollout-fleet/shared';
import { describe, expect, it } from 'vitest';
import { isSandboxLoss, lossRecordOf, lossesAreTheModels } from './loss-rule.js';

const attempt = (o: Partial<Attempt>): Attempt => ({
  attempt: 1,
  worker_id: 'w',
  sandbox_id: 's',
  started_at: '2026-01-01T00:00:00Z',
  ended_at: '2026-01-01T00:00:01Z',
  failure: null,
  ...o,
});
const AFTER = attempt({ lost_after_model: true, lost_in: 'step' });
const CLEAN = attempt({ lost_after_model: false, lost_in: 'setup' });

describe('lossRecordOf', () => {
  const dead = (details: Record<string, unknown> = {}): RolloutError =>
    new RolloutError('SANDBOX_DEAD', 'gone', { details });
  it.each([
    [
      'during a step (the step was sent)',
      dead({ lostAtStep: 0 }),
      'step',
      0,
      { lost_after_model: true, lost_in: 'step' },
    ],
    ['while settling after steps ran', dead(), 'settle', 2, { lost_after_model: true, lost_in: 'settle' }],
    ['during extraction after steps ran', dead(), 'extract', 1, { lost_after_model: true, lost_in: 'extract' }],
    [
      'during extraction of a trajectory with no steps',
      dead(),
      'extract',
      0,
      { lost_after_model: false, lost_in: 'extract' },
    ],
    ['before the steps (set-up)', dead(), 'setup', 0, { lost_after_model: false, lost_in: 'setup' }],
    [
      'the session vanished under a model command (closed with the token)',
      new RolloutError('SWEREX_SESSION_MISSING', 'no session', { details: { lostAtStep: 3 } }),
      'step',
      3,
      { lost_after_model: true, lost_in: 'step' },
    ],
    [
      'the gateway answered 503 (the platform names its cause)',
      new RolloutError('GATEWAY_ERROR', '503', { details: { status: 503, lostAtStep: 1 } }),
      'step',
      1,
      { lost_after_model: true, lost_in: 'step', platform_cause: 'the gateway answered 503' },
    ],
    [
      'a gateway timeout (504) is no platform cause: a stopped server produces it',
      new RolloutError('GATEWAY_ERROR', '504', { details: { status: 504, lostAtStep: 1 } }),
      'step',
      1,
      { lost_after_model: true, lost_in: 'step' },
    ],
  ] as const)('%s', (_name, err, phase, stepsRun, expected) => {
    expect(lossRecordOf(err, { phase, stepsRun })).toEqual(expected);
  });

  it('not a loss, or a loss of the grading sandbox: nothing recorded', () => {
    expect(lossRecordOf(new RolloutError('GRADING_FAILED', 'x'), { phase: 'step', stepsRun: 1 })).toBeUndefined();
    expect(lossRecordOf(dead(), { phase: 'grade', stepsRun: 1 })).toBeUndefined();
    expect(isSandboxLoss(new RolloutError('SWEREX_SESSION_MISSING', 'x'))).toBe(true);
  });
});

describe('lossesAreTheModels', () => {
  it.each([
    [
      'every attempt lost after model commands, at different steps',
      [AFTER, { ...AFTER, lost_in: 'extract' }, AFTER],
      3,
      [],
      true,
    ],
    ['one attempt lost before any model command', [AFTER, CLEAN, AFTER], 3, [], false],
    [
      'one attempt with a platform cause',
      [AFTER, { ...AFTER, platform_cause: 'the gateway answered 503' }, AFTER],
      3,
      [],
      false,
    ],
    ['one attempt during an outage (the ledger)', [AFTER, AFTER, AFTER], 3, [false, true, false], false],
    ['a single attempt could be the platform', [AFTER], 1, [], false],
    ['older history before the last n does not count', [CLEAN, AFTER, AFTER], 2, [], true],
    ['an attempt that lost nothing', [AFTER, attempt({}), AFTER], 3, [], false],
  ] as const)('%s → %s', (_name, attempts, n, outage, expected) => {
    expect(lossesAreTheModels(attempts as readonly Attempt[], n, outage)).toBe(expected);
  });
});
