import { describe, expect, it, vi } from 'vitest';
import { RolloutError } from '@rollout-fleet/shared';
import { backoffDelayMs, withRetry, type RetryEvent } from './retry-policy.js';

const throttled = () => new RolloutError('VEFAAS_THROTTLED', 'slow down');

/** Fails with the given errors in order, then resolves 'ok'. */
function failing(...errors: unknown[]) {
  const fn = vi.fn(async () => {
    const next = errors.shift();
    if (next !== undefined) throw next;
    return 'ok';
  });
  return fn;
}

function recorder() {
  const slept: number[] = [];
  return { slept, sleep: async (ms: number) => void slept.push(ms) };
}

describe('withRetry', () => {
  it('retries retryable errors with exponential full-jitter back-off', async () => {
    const { slept, sleep } = recorder();
    const events: RetryEvent[] = [];
    const fn = failing(throttled(), throttled(), throttled());
    await expect(withRetry(fn, { sleep, random: () => 0.5, onRetry: (e) => events.push(e) })).resolves.toBe('ok');
    expect(fn).toHaveBeenCalledTimes(4);
    // Windows 300, 600, 1200 ms; random 0.5 picks the middle of each.
    expect(slept).toEqual([150, 300, 600]);
    expect(events.map((e) => [e.retry, e.delayMs, (e.error as RolloutError).code])).toEqual([
      [1, 150, 'VEFAAS_THROTTLED'],
      [2, 300, 'VEFAAS_THROTTLED'],
      [3, 600, 'VEFAAS_THROTTLED'],
    ]);
  });

  it('gives up after `retries` retries and throws the last error', async () => {
    const { slept, sleep } = recorder();
    const last = new RolloutError('VEFAAS_SERVER_ERROR', 'third');
    const fn = failing(throttled(), throttled(), last, throttled());
    await expect(withRetry(fn, { retries: 2, sleep, jitter: false })).rejects.toBe(last);
    expect(fn).toHaveBeenCalledTimes(3);
    expect(slept).toEqual([300, 600]);
  });

  it('does not retry non-retryable errors or unknown throws', async () => {
    const { slept, sleep } = recorder();
    const auth = new RolloutError('VEFAAS_AUTH', 'bad key');
    const fnAuth = failing(auth);
    await expect(withRetry(fnAuth, { sleep })).rejects.toBe(auth);
    expect(fnAuth).toHaveBeenCalledTimes(1);

    const fnUnknown = failing(new TypeError('bug'));
    await expect(withRetry(fnUnknown, { sleep })).rejects.toThrow('bug');
    expect(fnUnknown).toHaveBeenCalledTimes(1);
    expect(slept).toEqual([]);
  });

  it('treats a synchronous throw from fn like a rejection (retried when retryable)', async () => {
    const { slept, sleep } = recorder();
    let calls = 0;
    const fn = (): Promise<string> => {
      calls += 1;
      if (calls === 1) throw throttled();
      return Promise.resolve('ok');
    };
    await expect(withRetry(fn, { sleep, jitter: false })).resolves.toBe('ok');
    expect(calls).toBe(2);
    expect(slept).toEqual([300]);
  });

  it('rejects with the abort reason without calling fn when the signal is already aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    const fn = failing();
    await expect(withRetry(fn, { signal: controller.signal })).rejects.toBe(reason);
    expect(fn).not.toHaveBeenCalled();
  });

  it('honours a custom isRetryable', async () => {
    const { sleep } = recorder();
    const fn = failing(new Error('flaky'));
    await expect(
      withRetry(fn, { sleep, isRetryable: (e) => e instanceof Error && e.message === 'flaky' }),
    ).resolves.toBe('ok');
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it('stops when the signal aborts during the wait', async () => {
    const controller = new AbortController();
    const fn = failing(throttled(), throttled());
    const result = withRetry(fn, {
      signal: controller.signal,
      sleep: async () => controller.abort(new Error('shutting down')),
    });
    await expect(result).rejects.toThrow('shutting down');
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('aborts a real wait promptly', async () => {
    const controller = new AbortController();
    const fn = failing(throttled());
    const result = withRetry(fn, {
      signal: controller.signal,
      minDelayMs: 60_000,
      jitter: false,
      onRetry: () => controller.abort(),
    });
    await expect(result).rejects.toThrow(/abort/i);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('caps each wait at maxDelayMs', () => {
    expect(backoffDelayMs(1, { jitter: false })).toBe(300);
    expect(backoffDelayMs(8, { jitter: false })).toBe(30_000);
    expect(backoffDelayMs(30, { jitter: true, random: () => 0.999 })).toBeLessThan(30_000);
    expect(backoffDelayMs(3, { minDelayMs: 100, maxDelayMs: 250, jitter: false })).toBe(250);
  });
});
