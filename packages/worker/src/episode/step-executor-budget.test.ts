import { describe, expect, it } from 'vitest';
import { SECRET_MASK, createSecretMasker } from '@rollout-fleet/shared';
import { toolCallToCommand } from '@rollout-fleet/sandbox';
import { MIN_KEPT_BYTES, createOutputBudget } from './output-limit.js';
import { createStepExecutor, type StepShell } from './step-executor.js';

const printing = (sizes: number[]): StepShell => {
  let i = 0;
  return {
    run: async () => {
      const size = sizes[i++] ?? 0;
      return { output: `${'a'.repeat(size / 2)}${'z'.repeat(size / 2)}`, exitCode: 0, durationMs: 1, timedOut: false };
    },
  };
};
const call = { name: 'execute_bash', arguments: { command: 'cat big.log' } };

describe('step executor: the episode’s output budget', () => {
  it('keeps steps whole while the budget lasts, then head + marker + tail of what is left, then 1 KiB each; the driver always gets the whole output', async () => {
    const budget = createOutputBudget({ perOutputBytes: 300_000, stepsBytes: 500_000 });
    const execute = createStepExecutor({
      shell: printing([200_000, 200_000, 200_000, 200_000]),
      toCommand: toolCallToCommand,
      stepTimeoutS: 5,
      outputLimitBytes: 300_000,
      budget,
    });
    const steps = [];
    for (let i = 0; i < 4; i++) steps.push(await execute(call, i));
    expect(steps.map((s) => s.record.truncated)).toEqual([false, false, true, true]);
    expect(steps.every((s) => s.output.length === 200_000)).toBe(true);
    expect(steps.map((s) => s.record.output_bytes)).toEqual([200_000, 200_000, 200_000, 200_000]);
    // 100 000 bytes left for the third step: its head and tail around the marker.
    const third = steps[2]!.record.output;
    expect(third).toContain('[... output truncated: 200000 bytes in total, 100000 bytes omitted ...]');
    expect(third.startsWith('a'.repeat(50_000))).toBe(true);
    expect(third.endsWith('z'.repeat(50_000))).toBe(true);
    expect(steps[3]!.record.output).toContain(
      `[... output truncated: 200000 bytes in total, ${200_000 - MIN_KEPT_BYTES} bytes omitted ...]`,
    );
  });

  it('spends what the masked record kept, once per step', async () => {
    const secret = 'ghp_0123456789abcdefghij';
    let spent = 0;
    const execute = createStepExecutor({
      shell: { run: async () => ({ output: `${secret}\n`, exitCode: 0, durationMs: 1, timedOut: false }) },
      toCommand: toolCallToCommand,
      stepTimeoutS: 5,
      outputLimitBytes: 1000,
      mask: createSecretMasker([secret])!.mask,
      budget: { allowance: () => 1000, spend: (bytes) => (spent += bytes) },
    });
    await execute(call, 0);
    expect(spent).toBe(Buffer.byteLength(`${SECRET_MASK}\n`));
  });
});
