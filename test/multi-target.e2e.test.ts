/**
 * Several sandbox applications (two vefaas-local hosts standing for two regions, emulated sandboxes): creates
 * are spread by weight; one that keeps answering 429s or errors is drained fleet-wide in favour of the other,
 * and tried again once its drain expires. A worker given both targets completes every episode without
 * spending an attempt on the failing one, and its reaper covers both.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  SandboxSpecSchema,
  createKeyspace,
  createLogger,
  createRedis,
  deleteKeysMatching,
  type RedisClient,
} from '@rollout-fleet/shared';
import {
  createVefaasClient,
  type VefaasClient,
  FLEET_LABEL_KEY,
  createSandboxSupply,
  type SuppliedSandbox,
  type SupplyTarget,
} from '@rollout-fleet/sandbox';
import { submitRun } from '@rollout-fleet/producer';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { collectResults, configOf, episode, openPipeline, testEnv, type Pipeline } from './support/pipeline-harness.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const silent = createLogger({ level: 'silent', format: 'json' });
const spec = SandboxSpecSchema.parse({ image: 'python', startup_timeout_s: 10 });

interface Region {
  host: VefaasLocalHandle;
  vefaas: VefaasClient;
  target: SupplyTarget;
}

let east: Region;
let west: Region;
let redis: RedisClient;
const prefixes: string[] = [];

async function region(id: string): Promise<Region> {
  const host = await startVefaasLocal({ isolation: 'emulated', logger: silent });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
  });
  return {
    host,
    vefaas,
    target: { id, target: { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl }, weight: 1 },
  };
}

beforeAll(async () => {
  [east, west] = await Promise.all([region('east'), region('west')]);
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  for (const r of [east, west]) r.host.faults.configure({});
  for (const prefix of prefixes.splice(0)) await deleteKeysMatching(redis, `rf:${prefix}:*`);
});
afterAll(async () => {
  redis?.disconnect();
  for (const r of [east, west]) {
    await r?.vefaas.close();
    await r?.host.close();
  }
});

describe('several sandbox targets', () => {
  it('drains a target that keeps answering 429s in favour of the other, and tries it again after the drain', async () => {
    const prefix = `{rf-test-${randomUUID()}}`;
    prefixes.push(prefix);
    const supply = await createSandboxSupply({
      redis,
      keys: createKeyspace(prefix),
      targets: [east.target, west.target],
      workerId: 'multi',
      logger: silent,
      limits: {
        createRatePerS: 100,
        createBurst: 20,
        createRecoverS: 60,
        maxSandboxes: 50,
        maxStarting: 50,
        acquireTimeoutMs: 20_000,
        createTimeoutMs: 5_000,
        leaseTtlMs: 10_000,
      },
      targetHealth: { threshold: 3, windowMs: 10_000, firstDrainMs: 1_500, maxDrainMs: 10_000, cacheMs: 0 },
    });
    west.host.faults.configure({ throttle: { createPerSecond: 0 } });
    const held: SuppliedSandbox[] = [];
    const acquire = async (): Promise<SuppliedSandbox> => {
      const s = await supply.acquire({
        sandbox: spec,
        tools: ['execute_bash'],
        role: 'main',
        runId: 'r',
        jobId: 'j',
        deadline: Date.now() + 60_000,
        logger: silent,
      });
      held.push(s);
      return s;
    };
    try {
      for (let i = 0; i < 16; i++) await acquire();
      expect(held.every((s) => s.targetId === 'east')).toBe(true);
      // West was tried until drained (3 failures), then left alone.
      const westThrottled = west.host.faults.stats.throttled;
      expect(westThrottled).toBeGreaterThanOrEqual(3);
      expect(westThrottled).toBeLessThanOrEqual(6);
      expect(await redis.exists(createKeyspace(prefix).targetHealth('west').drained)).toBe(1);

      // West recovers; once its drain has expired, it gets creates again.
      west.host.faults.configure({});
      await vi.waitFor(
        async () => expect(await redis.exists(createKeyspace(prefix).targetHealth('west').drained)).toBe(0),
        { timeout: 10_000, interval: 100 },
      );
      const later = await Promise.all(Array.from({ length: 12 }, () => acquire()));
      expect(later.some((s) => s.targetId === 'west')).toBe(true);
      const onWest = await west.vefaas.listAllSandboxes({
        FunctionId: west.host.functionId,
        Metadata: { [FLEET_LABEL_KEY]: supply.fleetId },
      });
      expect(onWest.map((s) => s.Id).sort()).toEqual(
        later
          .filter((s) => s.targetId === 'west')
          .map((s) => s.sandboxId)
          .sort(),
      );
    } finally {
      await Promise.all(held.map((s) => s.release()));
    }
  });

  it('a worker with both targets completes every episode in one attempt while one target answers 5xx', async () => {
    const config = configOf(testEnv({ RF_WORKER_CONCURRENCY: '4' }));
    prefixes.push(config.queue.prefix);
    const pipeline: Pipeline = openPipeline(config);
    let worker: RunningWorker | undefined;
    west.host.faults.configure({ controlPlane: { errorRate: 1 } });
    try {
      const runId = 'regions';
      const episodes = Array.from({ length: 10 }, (_, i) =>
        episode(runId, `e${i}`, { sandbox: { image: 'python' }, tools: ['execute_bash'] }),
      );
      await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId, episodes });
      worker = await startWorker({
        config,
        target: east.target.target,
        targets: [east.target, west.target],
        logger: silent,
      });
      const results = await collectResults(pipeline, runId, episodes.length);
      expect(results.every((r) => r.status === 'completed' && r.attempts.length === 1)).toBe(true);
      expect(west.host.faults.stats.injectedErrors).toBeGreaterThan(0);
      expect(west.host.sandboxCounts().total).toBe(0);
      // The reaper lists both targets (a pass over a target that errors is logged, not fatal).
      expect((await worker.reaper.reapOnce()).ran).toBe(true);
    } finally {
      await worker?.close();
      await pipeline.close();
    }
  });
});
