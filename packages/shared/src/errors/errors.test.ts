import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, classOf, isErrorCode, isRetryableCode } from './codes.js';
import { coerceError, toFailure } from './coerce.js';
import { RolloutError } from './rollout-error.js';

describe('error taxonomy', () => {
  it('decides class and retryability from the code alone', () => {
    const throttled = new RolloutError('VEFAAS_THROTTLED', 'slow down');
    expect(throttled.class).toBe('infra');
    expect(throttled.retryable).toBe(true);
    expect(new RolloutError('INPUT_INVALID', 'bad').class).toBe('input');
    expect(classOf('STEP_TIMEOUT')).toBe('model');
    expect(isRetryableCode('VEFAAS_AUTH')).toBe(false);
  });

  it('never marks an input or model failure as retryable', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      if (spec.class !== 'infra') expect({ code, retryable: spec.retryable }).toEqual({ code, retryable: false });
    }
  });

  it('coerces unknown throws into INTERNAL with the original as cause', () => {
    const original = new TypeError('boom');
    const err = coerceError(original);
    expect(err.code).toBe('INTERNAL');
    expect(err.cause).toBe(original);
    expect(coerceError('text').message).toBe('text');
    expect(coerceError(err)).toBe(err);
    expect(toFailure(new RolloutError('SANDBOX_DEAD', 'gone'))).toEqual({
      code: 'SANDBOX_DEAD',
      class: 'infra',
      message: 'gone',
    });
  });

  it('recognises its own codes only', () => {
    expect(isErrorCode('VEFAAS_THROTTLED')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });

  // Issue #9 item 2: whatever the model can cause is `model` (graded, reward by the rule); whatever our
  // infrastructure or the platform causes is `infra` (retried; null if it persists). The codes the issue names.
  it.each([
    ['SWEREX_NO_EXIT_CODE', 'model'],
    ['SWEREX_INTERRUPT_FAILED', 'model'],
    ['SWEREX_SESSION_ENDED', 'model'],
    ['SESSION_RESTART_FAILED', 'model'],
    ['EPISODE_DEADLINE', 'model'],
    ['PATCH_EXTRACTION_FAILED', 'model'],
    ['EVAL_SANDBOX_LOST', 'model'],
    ['SANDBOX_LOST_IN_STEP', 'model'],
    ['SANDBOX_LOST_AFTER_MODEL', 'model'],
    ['ATTEMPT_DEADLINE', 'infra'],
    ['GRADING_FAILED', 'infra'],
    ['SANDBOX_START_FAILED', 'infra'],
    ['JOB_LOCK_LOST', 'infra'],
    ['JOB_STALLED', 'infra'],
    ['SUPERSEDED', 'infra'],
    ['CANCELLED', 'input'],
  ] as const)('%s is %s', (code, cls) => {
    expect(classOf(code)).toBe(cls);
  });

  it('docs/adversarial-grading.md states each reviewed code with the class codes.ts gives it', () => {
    const doc = readFileSync(new URL('../../../../docs/adversarial-grading.md', import.meta.url), 'utf8');
    const table = doc.slice(doc.indexOf('## Model or infra'), doc.indexOf('Unchanged and confirmed'));
    const rows = [...table.matchAll(/^\| (`[A-Z_]+`(?:, `[A-Z_]+`)*)(?: \(new\))? \| (model|infra|input)\b/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(12);
    for (const [, codes, cls] of rows) {
      for (const code of (codes ?? '').match(/[A-Z_]+/g) ?? []) {
        expect(isErrorCode(code), code).toBe(true);
        expect({ code, cls: isErrorCode(code) ? classOf(code) : undefined }).toEqual({ code, cls });
      }
    }
  });
});
