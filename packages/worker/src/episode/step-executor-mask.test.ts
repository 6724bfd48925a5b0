import { describe, expect, it } from 'vitest';
import { RolloutError, SECRET_MASK, createSecretMasker } from '@rollout-fleet/shared';
import { toolCallToCommand } from '@rollout-fleet/sandbox';
import { createStepExecutor, type StepShell } from './step-executor.js';

const SECRET = 'ghp_0123456789abcdefghij';
const mask = createSecretMasker([SECRET])!.mask;
type Ran = Awaited<ReturnType<StepShell['run']>>;
const shellAnswering = (answer: Ran | Error): StepShell => ({
  run: async () => {
    if (answer instanceof Error) throw answer;
    return answer;
  },
});
const ok = (output: string): Ran => ({ output, exitCode: 0, durationMs: 1, timedOut: false });
const call = { name: 'execute_bash', arguments: { command: 'echo $GH_TOKEN' } };

describe('step executor: the episode’s secrets are masked in every observation', () => {
  it('masks the whole observation the drivers get and the record’s output; output_bytes stays the sandbox’s size', async () => {
    const execute = createStepExecutor({
      shell: shellAnswering(ok(`token ${SECRET}\n`)),
      toCommand: toolCallToCommand,
      stepTimeoutS: 5,
      outputLimitBytes: 10_000,
      mask,
    });
    const step = await execute(call, 0);
    expect(step.output).toBe(`token ${SECRET_MASK}\n`);
    expect(step.record).toMatchObject({
      output: `token ${SECRET_MASK}\n`,
      output_bytes: Buffer.byteLength(`token ${SECRET}\n`),
      truncated: false,
    });
  });

  it('masks before cutting to the output limit: a secret across the cut leaves no part of itself', async () => {
    // Head and tail are 20 bytes each: unmasked, the secret would straddle the head's end.
    const output = `${'x'.repeat(10)}${SECRET}${'y'.repeat(100)}`;
    const execute = createStepExecutor({
      shell: shellAnswering(ok(output)),
      toCommand: toolCallToCommand,
      stepTimeoutS: 5,
      outputLimitBytes: 40,
      mask,
    });
    const step = await execute(call, 0);
    expect(step.record.truncated).toBe(true);
    expect(step.record.output.startsWith(`${'x'.repeat(10)}${SECRET_MASK}yyyyyyy`)).toBe(true);
    expect(step.record.output).not.toContain(SECRET.slice(0, 6));
  });

  it('masks the text of a model-side error observation and its error message', async () => {
    const err = new RolloutError('SWEREX_RUNTIME', `could not run: ${SECRET}`);
    const execute = createStepExecutor({
      shell: shellAnswering(err),
      toCommand: toolCallToCommand,
      stepTimeoutS: 5,
      outputLimitBytes: 10_000,
      mask,
    });
    const step = await execute(call, 0);
    expect(err.class).toBe('model');
    expect(step.output).toBe(`could not run: ${SECRET_MASK}`);
    expect(step.record.error).toEqual({ code: 'SWEREX_RUNTIME', message: `could not run: ${SECRET_MASK}` });
  });

  it('without a masker (an episode with no secrets) the step is as the sandbox produced it', async () => {
    const execute = createStepExecutor({
      shell: shellAnswering(ok(`token ${SECRET}\n`)),
      toCommand: toolCallToCommand,
      stepTimeoutS: 5,
      outputLimitBytes: 10_000,
    });
    expect((await execute(call, 0)).output).toBe(`token ${SECRET}\n`);
  });
});
