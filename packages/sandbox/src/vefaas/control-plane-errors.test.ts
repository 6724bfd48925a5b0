import { describe, expect, it } from 'vitest';
import { classOf, isRetryableCode } from '@rollout-fleet/shared';
import { errorCodeForFailedStart } from './control-plane-errors.js';

describe('errorCodeForFailedStart', () => {
  it('an image the platform cannot initialise is configuration (input, never retried); other start failures stay infra and are retried', () => {
    const image = errorCodeForFailedStart('function_initialize_failed');
    expect(image).toBe('SANDBOX_IMAGE_UNAVAILABLE');
    expect([classOf(image), isRetryableCode(image)]).toEqual(['input', false]);
    for (const other of ['function_health_check_failed', '', undefined]) {
      const code = errorCodeForFailedStart(other);
      expect(code).toBe('SANDBOX_START_FAILED');
      expect([classOf(code), isRetryableCode(code)]).toEqual(['infra', true]);
    }
  });
});
