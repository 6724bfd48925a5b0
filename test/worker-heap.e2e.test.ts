/**
 * The heap budget `rollout-fleet worker` runs under (bin/worker-heap.js; RF_WORKER_HEAP_MB in the configuration
 * table): derived from the concurrency unless set, off with 0, and the user's own --max-old-space-size wins.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ROOT,
  cloudEnvFor,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Host,
} from './support/pipeline-harness.js';

interface WorkerHeap {
  HEAP_YOUNG_MB: number;
  dotenvOf(path: string): Record<string, string>;
  workerHeapBudgetMb(env: Record<string, string | undefined>, execArgv: string[]): number;
}
const heap = (await import(pathToFileURL(join(ROOT, 'bin/worker-heap.js')).href)) as WorkerHeap;
const budget = (env: Record<string, string | undefined> = {}, execArgv: string[] = []): number =>
  heap.workerHeapBudgetMb(env, execArgv);

describe('worker heap budget', () => {
  it("is off (0: V8's own limit) unless RF_WORKER_HEAP_MB is set; an invalid value is off here (the configuration refuses it)", () => {
    expect(budget({})).toBe(0);
    expect(budget({ RF_WORKER_HEAP_MB: '' })).toBe(0); // empty is unset, as in the configuration
    expect(budget({ RF_WORKER_HEAP_MB: '191', RF_WORKER_CONCURRENCY: '1000' })).toBe(191);
    expect(budget({ RF_WORKER_HEAP_MB: '0' })).toBe(0);
    expect(budget({ RF_WORKER_HEAP_MB: 'lots' })).toBe(0);
    expect(heap.HEAP_YOUNG_MB).toBe(96);
  });

  it('reads .env as the configuration does (a missing file is no variables)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-heap-'));
    try {
      await writeFile(join(dir, '.env'), 'RF_WORKER_HEAP_MB=256\nRF_WORKER_CONCURRENCY=10\n');
      expect(heap.dotenvOf(join(dir, '.env'))).toEqual({ RF_WORKER_HEAP_MB: '256', RF_WORKER_CONCURRENCY: '10' });
      expect(heap.dotenvOf(join(dir, 'missing.env'))).toEqual({});
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is off when node was given --max-old-space-size (NODE_OPTIONS or a node flag): the user's limit wins", () => {
    expect(budget({ RF_WORKER_HEAP_MB: '191', NODE_OPTIONS: '--enable-source-maps --max-old-space-size=512' })).toBe(0);
    expect(budget({ RF_WORKER_HEAP_MB: '191' }, ['--max_old_space_size=512'])).toBe(0);
    expect(budget({ RF_WORKER_HEAP_MB: '191', NODE_OPTIONS: '--max-semi-space-size=32' })).toBe(191);
  });
});

describe('`rollout-fleet worker` under its heap budget', () => {
  let host: Host;

  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
  });

  afterAll(async () => {
    await host?.close();
  });

  /**
   * Starts a worker, waits for its "V8 heap limit" line, stops it; its limit in MB. (SIGTERM through the thread and
   * the exit code: worker-health.e2e.test.ts.)
   */
  async function heapLineOf(
    extra: Record<string, string>,
  ): Promise<{ heapLimitMb: number; heapGrowthPercent: number }> {
    const child = spawnWorker({
      ...testEnv(),
      ...cloudEnvFor(host.handle),
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      ...extra,
    });
    try {
      await vi.waitFor(() => expect(child.log()).toContain('"heapLimitMb"'), { timeout: 30_000, interval: 50 });
    } finally {
      await stopChild(child);
    }
    const line = child
      .log()
      .split('\n')
      .find((l) => l.includes('"heapLimitMb"'));
    return JSON.parse(line!) as { heapLimitMb: number; heapGrowthPercent: number };
  }
  const heapLimitOf = async (extra: Record<string, string>): Promise<number> => (await heapLineOf(extra)).heapLimitMb;

  it("sets V8's heap growth between major collections: 100 % unless RF_WORKER_HEAP_GROWTH_PERCENT says otherwise (0: V8's own)", async () => {
    expect((await heapLineOf({})).heapGrowthPercent).toBe(100);
    expect((await heapLineOf({ RF_WORKER_HEAP_GROWTH_PERCENT: '60' })).heapGrowthPercent).toBe(60);
    expect((await heapLineOf({ RF_WORKER_HEAP_GROWTH_PERCENT: '0' })).heapGrowthPercent).toBe(0);
  });

  it("runs with RF_WORKER_HEAP_MB of old generation and 96 MB of young when set, with V8's GBs otherwise", async () => {
    const budgeted = await heapLimitOf({ RF_WORKER_HEAP_MB: '191' });
    expect(budgeted).toBeGreaterThanOrEqual(191 + 96); // old + young generation
    expect(budgeted).toBeLessThan(191 + 96 + 64);
    expect(await heapLimitOf({ RF_WORKER_CONCURRENCY: '1000' })).toBeGreaterThan(1000);
  });

  it('exits 1 naming RF_WORKER_HEAP_MB when the worker outgrows its budget', async () => {
    const child = spawnWorker({ ...testEnv(), ...cloudEnvFor(host.handle), RF_WORKER_HEAP_MB: '8' });
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(child.log()).toContain('worker: out of its 8 MB heap budget (RF_WORKER_HEAP_MB');
  });
});
