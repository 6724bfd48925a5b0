/**
 * A worker zips the tool bundle once, before it takes jobs: zipping blocks the event loop (~0.2–0.3 s), and done at
 * the first sandbox's set-up it stalled every episode the fresh worker had just started. Then an episode's set-up
 * reuses those bytes (no second zip). Real Redis, emulated vefaas-local.
 */
import type * as Fflate from 'fflate';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config } from '@rollout-fleet/shared';
import { submitRun } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  collectResults,
  configOf,
  episode,
  openPipeline,
  silentLogger,
  startHost,
  testEnv,
  type Host,
} from './support/pipeline-harness.js';

const zips = vi.hoisted(() => ({ count: 0 }));
vi.mock('fflate', async (importOriginal) => {
  const fflate = await importOriginal<typeof Fflate>();
  return {
    ...fflate,
    zipSync: (...args: Parameters<typeof fflate.zipSync>) => {
      zips.count += 1;
      return fflate.zipSync(...args);
    },
  };
});

describe('the tool bundle upload of a worker', () => {
  let host: Host;
  let config: Config;
  let worker: RunningWorker | undefined;
  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
    config = configOf(testEnv());
  });
  afterAll(async () => {
    await worker?.close();
    await host?.close();
  });

  it('is zipped before the worker takes jobs, and episodes with tools reuse it', async () => {
    worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 2 });
    expect(zips.count).toBe(1);
    const pipeline = openPipeline(config);
    try {
      const episodes = ['e1', 'e2'].map((id) => episode('tools-run', id, { tools: ['execute_bash'] }));
      await submitRun({
        queue: pipeline.queue,
        redis: pipeline.redis,
        keys: pipeline.keys,
        runId: 'tools-run',
        episodes,
      });
      const results = await collectResults(pipeline, 'tools-run', episodes.length);
      expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
    } finally {
      await pipeline.close();
    }
    expect(zips.count).toBe(1);
  });
});
