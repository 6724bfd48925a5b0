/**
 * The warm pool against vefaas-local (emulated sandboxes, real Redis): it fills ahead of demand — announced
 * runs and the next waiting jobs — within RF_WARM_POOL_MAX and the fleet's caps (and yields to anyone waiting
 * for a slot); a claim checks liveness and discards a dead warm sandbox; idle ones are killed.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EpisodeSchema,
  announceDemand,
  createKeyspace,
  createLogger,
  createRedis,
  deleteKeysMatching,
  specKey,
  type Episode,
  type EpisodeJobData,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import {
  createVefaasClient,
  type VefaasClient,
  FLEET_LABEL_KEY,
  WarmPool,
  createSandboxSupply,
  type SandboxSupply,
  type SuppliedSandbox,
  type SupplyLimits,
} from '@rollout-fleet/sandbox';
import { submitRun } from '@rollout-fleet/producer';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { createWorkerMetrics } from '@rollout-fleet/worker';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const silent = createLogger({ level: 'silent', format: 'json' });

let host: VefaasLocalHandle;
let vefaas: VefaasClient;
let redis: RedisClient;
const prefixes: string[] = [];
const pools: WarmPool[] = [];
const held: SuppliedSandbox[] = [];

beforeAll(async () => {
  host = await startVefaasLocal({ isolation: 'emulated', logger: silent });
  vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
  });
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  await Promise.all(held.splice(0).map((s) => s.release()));
  await Promise.all(pools.splice(0).map((p) => p.stop()));
  for (const prefix of prefixes.splice(0)) {
    await deleteKeysMatching(redis, `rf:${prefix}:*`);
    await deleteKeysMatching(redis, `${prefix}:*`);
  }
});
afterAll(async () => {
  redis?.disconnect();
  await vefaas?.close();
  await host?.close();
});

const LIMITS: SupplyLimits = {
  createRatePerS: 100,
  createBurst: 20,
  createRecoverS: 60,
  maxSandboxes: 20,
  maxStarting: 20,
  acquireTimeoutMs: 10_000,
  createTimeoutMs: 5_000,
  leaseTtlMs: 5_000,
};

function episodes(runId: string, image: string, count: number): Episode[] {
  return Array.from({ length: count }, (_, i) =>
    EpisodeSchema.parse({
      run_id: runId,
      episode_id: `e${i}`,
      instance_id: image,
      sandbox: { image },
      tools: ['execute_bash'],
      trajectory: [],
    }),
  );
}

async function setup(
  o: {
    limits?: Partial<SupplyLimits>;
    maxSize?: number;
    idleMs?: number;
    queue?: Queue<EpisodeJobData>;
    prefix?: string;
    slotPollMs?: { first: number; max: number };
  } = {},
) {
  const prefix = o.prefix ?? `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  const keys: Keyspace = createKeyspace(prefix);
  const metrics = createWorkerMetrics();
  const supply: SandboxSupply = await createSandboxSupply({
    redis,
    keys,
    targets: [{ id: 'default', target: { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl } }],
    workerId: 'warm-test',
    logger: silent,
    limits: { ...LIMITS, ...o.limits },
    metrics,
    slotPollMs: o.slotPollMs ?? { first: 20, max: 100 },
  });
  const pool = new WarmPool({
    supply,
    redis,
    keys,
    ...(o.queue ? { queue: o.queue } : {}),
    logger: silent,
    maxSize: o.maxSize ?? 10,
    idleMs: o.idleMs ?? 60_000,
    intervalMs: 50,
    metrics: metrics.supply,
  });
  pools.push(pool);
  return { prefix, keys, supply, pool, metrics };
}

async function fleetSandboxes(supply: SandboxSupply): Promise<string[]> {
  const listed = await vefaas.listAllSandboxes({
    FunctionId: host.functionId,
    Metadata: { [FLEET_LABEL_KEY]: supply.fleetId },
  });
  return listed.filter((s) => s.Status !== 'Terminating').map((s) => s.Id);
}

describe('WarmPool', () => {
  it("fills an announced run's images ahead of time; acquire then takes a ready one without creating", async () => {
    const { keys, supply, pool, metrics } = await setup({ maxSize: 10 });
    await announceDemand({
      redis,
      keys,
      runId: 'next-batch',
      episodes: [...episodes('next-batch', 'img-a', 3), ...episodes('next-batch', 'img-b', 2)],
    });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect(await supply.leases.counts()).toMatchObject({ ready: 5, warming: 0 });
      },
      { timeout: 10_000, interval: 50 },
    );
    // No more than announced, however many ticks run.
    await pool.tick();
    await pool.tick();
    expect((await supply.leases.counts()).ready + (await supply.leases.counts()).warming).toBe(5);
    const createsBefore = host.faults.stats.createsAdmitted;

    const [a] = episodes('next-batch', 'img-a', 1);
    const sandbox = await supply.acquire({
      sandbox: a!.sandbox,
      tools: a!.tools,
      role: 'main',
      runId: 'next-batch',
      jobId: 'j',
      deadline: Date.now() + 60_000,
      logger: silent,
    });
    held.push(sandbox);
    expect(sandbox.warm).toBe(true);
    expect(host.faults.stats.createsAdmitted).toBe(createsBefore);
    expect(await sandbox.env.communicate('echo warm')).toBe('warm\n');
    expect(await supply.leases.get(sandbox.ticket)).toMatchObject({ role: 'main', job: 'j' });
    expect(await supply.leases.counts()).toMatchObject({ ready: 4 });
    expect(await metrics.registry.getSingleMetricAsString('rf_warm_pool_total')).toContain('event="hit"} 1');
  });

  it('stays within RF_WARM_POOL_MAX and the live cap, and yields to acquirers waiting for a slot', async () => {
    const { keys, supply, pool } = await setup({ maxSize: 4, limits: { maxSandboxes: 6 } });
    await announceDemand({ redis, keys, runId: 'big', episodes: episodes('big', 'img-c', 50) });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect((await supply.leases.counts()).ready).toBe(4);
      },
      { timeout: 10_000, interval: 50 },
    );
    for (let i = 0; i < 5; i++) await pool.tick();
    expect(await supply.leases.counts()).toMatchObject({ live: 4, ready: 4, warming: 0 });

    // Two cold sandboxes of another image take the live cap to 6; a third acquirer has to wait.
    const [other] = episodes('x', 'img-other', 1);
    const request = {
      sandbox: other!.sandbox,
      tools: other!.tools,
      role: 'main' as const,
      runId: 'x',
      jobId: 'j',
      deadline: Date.now() + 60_000,
      logger: silent,
    };
    held.push(await supply.acquire(request), await supply.acquire(request));
    expect((await supply.leases.counts()).live).toBe(6);
    // The live cap is full of idle warm sandboxes of another image: a cold acquirer evicts one to make room.
    const third = await supply.acquire(request);
    held.push(third);
    expect(third.warm).toBe(false);
    expect(await supply.leases.counts()).toMatchObject({ live: 6, ready: 3 });
    // While someone waits for a slot, the pool does not refill.
    await supply.leases.wait('someone', 10_000);
    for (let i = 0; i < 5; i++) await pool.tick();
    expect(await supply.leases.counts()).toMatchObject({ live: 6, ready: 3, warming: 0 });
    expect((await fleetSandboxes(supply)).length).toBeLessThanOrEqual(6);
  });

  it('a cold acquirer evicts only after one pause: the warm sandbox a job starting alongside claims is not taken from it', async () => {
    const { keys, supply, pool, metrics } = await setup({
      maxSize: 1,
      limits: { maxSandboxes: 2 },
      slotPollMs: { first: 1_000, max: 1_000 },
    });
    const [x] = episodes('x', 'img-x', 1);
    const cold = (e: Episode) => ({
      sandbox: e.sandbox,
      tools: e.tools,
      role: 'main' as const,
      runId: e.run_id,
      jobId: e.episode_id,
      deadline: Date.now() + 60_000,
      logger: silent,
    });
    const other = await supply.acquire(cold(x!));
    await announceDemand({ redis, keys, runId: 'batch', episodes: episodes('batch', 'img-w', 1) });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect(await supply.leases.counts()).toMatchObject({ live: 2, ready: 1 });
      },
      { timeout: 10_000, interval: 50 },
    );
    // The live cap is full (one cold sandbox, one ready warm one): a job of another image starts and has to wait.
    const [late] = episodes('batch', 'img-late', 1);
    const waiting = supply.acquire(cold(late!));
    await vi.waitFor(async () => expect((await supply.leases.counts()).waiters).toBe(1), {
      timeout: 5_000,
      interval: 5,
    });
    // Meanwhile the job the warm sandbox was made for starts and claims it.
    const [w] = episodes('batch', 'img-w', 1);
    const claimed = await supply.acquire(cold(w!));
    held.push(claimed);
    expect(claimed.warm).toBe(true);
    await other.release();
    const created = await waiting;
    held.push(created);
    expect(created.warm).toBe(false);
    expect(await metrics.registry.getSingleMetricAsString('rf_warm_pool_total')).not.toContain('event="evicted"');
  });

  it('fills spec after spec in the order the demand comes, each up to its demand, not spread over every spec', async () => {
    const { keys, supply, pool } = await setup({ maxSize: 10, limits: { maxSandboxes: 4 } });
    const first = episodes('ordered', 'img-f', 2);
    await announceDemand({ redis, keys, runId: 'ordered', episodes: first });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect(await supply.leases.counts()).toMatchObject({ ready: 2, warming: 0 });
      },
      { timeout: 10_000, interval: 50 },
    );
    // The run grows: img-f ×4 first, then img-g ×4, with room for two more sandboxes. img-f comes first in the
    // demand, so it is completed first (img-g misses more, but its jobs come later).
    const f = episodes('ordered', 'img-f', 4);
    const g = episodes('ordered', 'img-g', 4).map((e, i) => ({ ...e, episode_id: `g${i}` }));
    await announceDemand({ redis, keys, runId: 'ordered', episodes: [...f, ...g] });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect(await supply.leases.counts()).toMatchObject({ live: 4, ready: 4, warming: 0 });
      },
      { timeout: 10_000, interval: 50 },
    );
    const specF = specKey(f[0]!.sandbox, f[0]!.tools);
    expect((await supply.leases.pool()).map((entry) => entry.spec)).toEqual([specF, specF, specF, specF]);
  });

  it('looks ahead at the next waiting jobs: an RL group of one image is made ready before a worker takes it', async () => {
    const prefix = `{rf-test-${randomUUID()}}`;
    const queue = new Queue<EpisodeJobData>('episodes', { connection: redis, prefix });
    try {
      const { keys, supply, pool } = await setup({ maxSize: 8, queue, prefix });
      const group = episodes('group', 'img-group', 6);
      await submitRun({ queue, redis, keys, runId: 'group', episodes: group });
      await vi.waitFor(
        async () => {
          await pool.tick();
          expect(await supply.leases.counts()).toMatchObject({ ready: 6 });
        },
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it('a claim checks liveness: a dead warm sandbox is discarded (and counted), the next one is handed out', async () => {
    const { keys, supply, pool, metrics } = await setup({ maxSize: 2 });
    await announceDemand({ redis, keys, runId: 'r', episodes: episodes('r', 'img-d', 2) });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect((await supply.leases.counts()).ready).toBe(2);
      },
      { timeout: 10_000, interval: 50 },
    );
    const oldest = (
      await redis.lrange(`${keys.slotBase()}pool-ready:${(await supply.leases.pool())[0]!.spec}`, 0, 0)
    )[0]!;
    const deadSandbox = (await supply.leases.get(oldest))!.sandbox;
    const killed = await fetch(`${host.controlPlaneUrl}/_admin/sandboxes/${deadSandbox}/kill-instance`, {
      method: 'POST',
    });
    expect(killed.status).toBe(200);
    const [d] = episodes('r', 'img-d', 1);
    const sandbox = await supply.acquire({
      sandbox: d!.sandbox,
      tools: d!.tools,
      role: 'main',
      runId: 'r',
      jobId: 'j',
      deadline: Date.now() + 60_000,
      logger: silent,
    });
    held.push(sandbox);
    expect(sandbox.warm).toBe(true);
    expect(sandbox.sandboxId).not.toBe(deadSandbox);
    expect(await metrics.registry.getSingleMetricAsString('rf_warm_pool_total')).toContain('event="discarded"} 1');
    expect(await fleetSandboxes(supply)).not.toContain(deadSandbox);
  });

  it('a claim costs one round trip to the sandbox and no control-plane call while its lifetime has room; a short one is extended at once', async () => {
    const { keys, supply, pool } = await setup({ maxSize: 2 });
    await announceDemand({ redis, keys, runId: 'r', episodes: episodes('r', 'img-l', 2) });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect((await supply.leases.counts()).ready).toBe(2);
      },
      { timeout: 10_000, interval: 50 },
    );
    const [e] = episodes('r', 'img-l', 1);
    const claim = async (): Promise<Record<string, number>> => {
      const before = host.faults.calls;
      const sandbox = await supply.acquire({
        sandbox: e!.sandbox,
        tools: e!.tools,
        role: 'main',
        runId: 'r',
        jobId: 'j',
        deadline: Date.now() + 3_600_000,
        logger: silent,
      });
      held.push(sandbox);
      expect(sandbox.warm).toBe(true);
      const after = host.faults.calls;
      return Object.fromEntries(
        Object.entries(after)
          .map(([k, n]) => [k, n - (before[k] ?? 0)])
          .filter(([, n]) => n !== 0),
      );
    };
    // The filler recorded the platform lifetime it asked for (several minutes): nothing to extend yet.
    const roomy = await claim();
    expect(Object.keys(roomy).filter((k) => k.startsWith('gw:'))).toHaveLength(1);
    expect(Object.values(roomy).reduce((a, b) => a + b, 0)).toBe(1);
    // The other one's lifetime ends within the keeper's margin: its claimer extends it right away.
    const [last] = await supply.leases.pool();
    const [seconds, micros] = await redis.time();
    const serverNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.hset(`${keys.slotBase()}lease:${last!.ticket}`, 'lifetime_ends_at', String(serverNow + 60_000));
    const before = host.faults.calls['cp:SetSandboxTimeout'] ?? 0;
    await claim();
    await vi.waitFor(() => expect(host.faults.calls['cp:SetSandboxTimeout'] ?? 0).toBe(before + 1), {
      timeout: 5_000,
      interval: 20,
    });
  });

  it('kills warm sandboxes nobody claims within the idle time', async () => {
    const { keys, supply, pool, metrics } = await setup({ maxSize: 3, idleMs: 200 });
    await announceDemand({ redis, keys, runId: 'idle', episodes: episodes('idle', 'img-e', 3) });
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect((await supply.leases.counts()).ready).toBe(3);
      },
      { timeout: 10_000, interval: 50 },
    );
    const made = await fleetSandboxes(supply);
    expect(made).toHaveLength(3);
    // The announcement lapses (say the trainer stopped): nothing refills, the idle ones are killed.
    await redis.del(keys.announced('idle'));
    await vi.waitFor(
      async () => {
        await pool.tick();
        expect(await supply.leases.counts()).toMatchObject({ live: 0, ready: 0 });
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(await fleetSandboxes(supply)).toEqual([]);
    expect(await metrics.registry.getSingleMetricAsString('rf_warm_pool_total')).toContain('event="expired"} 3');
  });
});
