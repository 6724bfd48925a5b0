import { describe, expect, it } from 'vitest';
import { formatStepLog, stepProgress } from './job-progress.js';

describe('job progress and step log lines', () => {
  it('gives Bull Board a percentage and a step i/N label', () => {
    expect(stepProgress(3, 12)).toEqual({ progress: 25, step: 3, total: 12, label: 'step 3/12' });
    expect(stepProgress(1, 3).progress).toBe(33.3);
    expect(stepProgress(0, 0)).toEqual({ progress: 100, step: 0, total: 0, label: 'step 0/0' });
    expect(stepProgress(9, 4).step).toBe(4);
  });

  it('writes one line per step with tool, exit code and duration', () => {
    const base = { index: 2, tool: 'bash', exit_code: 0, duration_ms: 1240, timed_out: false };
    expect(formatStepLog(base, 12)).toBe('step 3/12 bash exit=0 1.24s');
    expect(formatStepLog({ ...base, exit_code: null, timed_out: true, duration_ms: 120_000 }, 12)).toBe('step 3/12 bash exit=- 120s timeout');
    expect(formatStepLog({ ...base, tool: 'str_replace_editor', exit_code: 1, duration_ms: 15_500, error: { code: 'BAD_ARGS', message: 'x' }, truncated: true }, 12)).toBe(
      'step 3/12 str_replace_editor exit=1 15.5s error=BAD_ARGS output-truncated',
    );
  });
});
