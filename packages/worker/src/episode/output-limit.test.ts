import { describe, expect, it } from 'vitest';
import { MIN_KEPT_BYTES, createOutputBudget, keepOutput } from './output-limit.js';
import { timeoutObservation } from './observations.js';

describe('keepOutput', () => {
  it('keeps output up to the limit whole', () => {
    expect(keepOutput('hello', 5)).toEqual({ output: 'hello', output_bytes: 5, truncated: false });
  });

  it('keeps head and tail beyond the limit and notes the full size', () => {
    const output = `${'a'.repeat(1000)}MIDDLE${'z'.repeat(1000)}`;
    const kept = keepOutput(output, 100);
    expect(kept.truncated).toBe(true);
    expect(kept.output_bytes).toBe(2006);
    expect(kept.output.startsWith('a'.repeat(50))).toBe(true);
    expect(kept.output.endsWith('z'.repeat(50))).toBe(true);
    expect(kept.output).not.toContain('MIDDLE');
    expect(kept.output).toContain('2006 bytes in total, 1906 bytes omitted');
  });

  it('counts bytes, not characters, for multi-byte text', () => {
    const kept = keepOutput('é'.repeat(100), 50);
    expect(kept.output_bytes).toBe(200);
    expect(kept.truncated).toBe(true);
  });
});

describe('observations', () => {
  it('words a timeout as the reference agent does', () => {
    expect(timeoutObservation('sleep 30', 1)).toMatch(
      /^The command 'sleep 30' was cancelled because it took more than 1 seconds\. Please try a different command/,
    );
  });
});

describe('createOutputBudget', () => {
  it('lets each output keep the per-output limit until the steps have spent their share, then 1 KiB each', () => {
    const budget = createOutputBudget({ perOutputBytes: 100_000, stepsBytes: 250_000 });
    expect(budget.allowance()).toBe(100_000);
    budget.spend(100_000);
    budget.spend(100_000);
    expect(budget.allowance()).toBe(50_000);
    budget.spend(50_000);
    expect(budget.allowance()).toBe(MIN_KEPT_BYTES);
    budget.spend(MIN_KEPT_BYTES);
    expect(budget.allowance()).toBe(MIN_KEPT_BYTES);
    // A budget smaller than the floor still keeps the floor: the marker is always there.
    expect(createOutputBudget({ perOutputBytes: 100_000, stepsBytes: -5 }).allowance()).toBe(MIN_KEPT_BYTES);
  });
});
