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
    expect(toFailure(new RolloutError('SANDBOX_DEAD', 'gone'))).toEqual({ code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' });
  });

  it('recognises its own codes only', () => {
    expect(isErrorCode('VEFAAS_THROTTLED')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });
});
