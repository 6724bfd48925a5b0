import { describe, expect, it, vi } from 'vitest';
import { ProgressBatcher } from './progress-batcher.js';

function recordingSink() {
  const writes: Array<{ kind: 'progress' | 'log'; value: unknown; at: number }> = [];
  return {
    writes,
    sink: {
      updateProgress: vi.fn(
        async (value: number) => void writes.push({ kind: 'progress', value, at: performance.now() }),
      ),
      logRows: vi.fn(
        async (rows: readonly string[]) =>
          void rows.forEach((row) => writes.push({ kind: 'log', value: row, at: performance.now() })),
      ),
    },
  };
}

describe('ProgressBatcher', () => {
  it('writes the first step at once, then batches: the latest progress once and every log row', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const { sink, writes } = recordingSink();
      const batcher = new ProgressBatcher(sink, { intervalMs: 1000 });
      batcher.push(1, 'step 1');
      await vi.advanceTimersByTimeAsync(0);
      expect(writes.map((w) => w.value)).toEqual([1, 'step 1']);
      for (let i = 2; i <= 5; i++) {
        await vi.advanceTimersByTimeAsync(100);
        batcher.push(i, `step ${i}`);
      }
      expect(writes).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(1000);
      expect(writes.map((w) => w.value)).toEqual([1, 'step 1', 5, 'step 2', 'step 3', 'step 4', 'step 5']);
      expect(sink.updateProgress).toHaveBeenCalledTimes(2);
      expect(sink.logRows).toHaveBeenCalledTimes(2);
      batcher.push(6, 'step 6');
      await batcher.close();
      expect(writes.map((w) => w.value).slice(-2)).toEqual([6, 'step 6']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('close() writes what is pending and waits for writes in flight; a failed write is logged, never thrown', async () => {
    const warn = vi.fn();
    const sink = {
      updateProgress: vi.fn(async () => {
        throw new Error('redis down');
      }),
      logRows: vi.fn(async (_rows: readonly string[]) => undefined),
    };
    const batcher = new ProgressBatcher(sink, { intervalMs: 60_000, logger: { warn } as never });
    batcher.push(1, 'a');
    batcher.push(2, 'b');
    await batcher.close();
    expect(sink.updateProgress).toHaveBeenCalledTimes(2);
    expect(sink.logRows.mock.calls.map(([rows]) => rows)).toEqual([['a'], ['b']]);
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it('log() appends a row without moving the progress (the grade after the last step)', async () => {
    const sink = {
      updateProgress: vi.fn(async (_p: number) => undefined),
      logRows: vi.fn(async (_rows: readonly string[]) => undefined),
    };
    const batcher = new ProgressBatcher(sink, { intervalMs: 60_000 });
    batcher.push(3, 'step 3/3');
    batcher.log('graded parser=pytest');
    await batcher.close();
    expect(sink.updateProgress.mock.calls.map(([p]) => p)).toEqual([3]);
    expect(sink.logRows.mock.calls.map(([rows]) => rows)).toEqual([['step 3/3'], ['graded parser=pytest']]);
  });
});
