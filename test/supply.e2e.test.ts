/**
 * The sandbox supply in one process against vefaas-local (emulated sandboxes, real signed control plane and
 * gateway, real Redis): a ready sandbox with tools, release frees everything, a create whose answer was lost is
 * adopted by its label (never created twice), 429s lower the fleet rate without failing anyone, full caps are
 * waited for (and time out as SANDBOX_ACQUIRE_TIMEOUT), lost leases and idle sessions are reported.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AGENT_ENV_LABEL_KEY,
  createVefaasClient,
  type VefaasClient,
  FLEET_LABEL_KEY,
  createSandboxSupply,
  type SandboxRequest,
  type SandboxSupply,
  type SuppliedSandbox,
  type SupplyLimits,
} from '@rollout-fleet/sandbox';
import {
  SandboxSpecSchema,
  createKeyspace,
  createLogger,
  createRedis,
  deleteKeysMatching,
  type Keyspace,
  type RedisClient,
  type RolloutError,
  LuaScript,
} from '@rollout-fleet/shared';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { createWorkerMetrics } from '@rollout-fleet/worker';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const silent = createLogger({ level: 'silent', format: 'json' });
const spec = SandboxSpecSchema.parse({ image: 'python', startup_timeout_s: 10 });

let host: VefaasLocalHandle;
let vefaas: VefaasClient;
let redis: RedisClient;
const prefixes: string[] = [];
const held: SuppliedSandbox[] = [];
const supplies: SandboxSupply[] = [];

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
  await Promise.all(supplies.splice(0).map((s) => s.close()));
  host.faults.configure({});
  for (const prefix of prefixes.splice(0)) {
    await deleteKeysMatching(redis, `rf:${prefix}:*`);
  }
});

afterAll(async () => {
  redis?.disconnect();
  await vefaas?.close();
  await host?.close();
});

const LIMITS: SupplyLimits = {
  createRatePerS: 50,
  createBurst: 10,
  createRecoverS: 60,
  maxSandboxes: 10,
  maxStarting: 10,
  acquireTimeoutMs: 10_000,
  createTimeoutMs: 5_000,
  leaseTtlMs: 5_000,
};

async function supplyWith(limits: Partial<SupplyLimits> = {}, keys?: Keyspace, slotPollMs = { first: 20, max: 100 }) {
  let keyspace = keys;
  if (!keyspace) {
    const prefix = `{rf-test-${randomUUID()}}`;
    prefixes.push(prefix);
    keyspace = createKeyspace(prefix);
  }
  const metrics = createWorkerMetrics();
  const supply = await createSandboxSupply({
    redis,
    keys: keyspace,
    targets: [{ id: 'default', target: { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl } }],
    workerId: 'test-worker',
    logger: silent,
    limits: { ...LIMITS, ...limits },
    metrics,
    slotPollMs,
  });
  supplies.push(supply);
  return { supply, metrics, keys: keyspace };
}

function request(overrides: Partial<SandboxRequest> = {}): SandboxRequest {
  return {
    sandbox: spec,
    tools: ['execute_bash'],
    role: 'main',
    runId: 'run',
    jobId: 'job',
    deadline: Date.now() + 60_000,
    logger: silent,
    ...overrides,
  };
}

async function acquire(supply: SandboxSupply, overrides: Partial<SandboxRequest> = {}): Promise<SuppliedSandbox> {
  const sandbox = await supply.acquire(request(overrides));
  held.push(sandbox);
  return sandbox;
}

async function statusOf(sandboxId: string): Promise<string> {
  try {
    return (await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).Status;
  } catch (err) {
    if ((err as RolloutError).code === 'VEFAAS_NOT_FOUND') return 'gone';
    throw err;
  }
}

describe('SandboxSupply', () => {
  it('hands out a ready sandbox with its tools, labelled with the fleet id; release kills it and frees the slot', async () => {
    const { supply, metrics } = await supplyWith();
    const sandbox = await acquire(supply);
    expect(await sandbox.env.communicate('echo ready')).toBe('ready\n');
    const [listed] = await vefaas.listAllSandboxes({
      FunctionId: host.functionId,
      Metadata: { [FLEET_LABEL_KEY]: supply.fleetId },
    });
    expect(listed?.Id).toBe(sandbox.sandboxId);
    expect(listed?.Metadata?.[AGENT_ENV_LABEL_KEY]).toBe(`${sandbox.ticket}.1`);
    expect(await supply.leases.counts()).toMatchObject({ live: 1, starting: 0 });
    expect(await supply.leases.get(sandbox.ticket)).toMatchObject({
      sandbox: sandbox.sandboxId,
      role: 'main',
      job: 'job',
      run: 'run',
    });
    await sandbox.release();
    await sandbox.release();
    expect(['gone', 'Terminating']).toContain(await statusOf(sandbox.sandboxId));
    expect(await supply.leases.counts()).toMatchObject({ live: 0, starting: 0 });
    expect(await metrics.registry.getSingleMetricAsString('rf_sandbox_creates_total')).toContain('outcome="ok"} 1');
  });

  it('records how late each create went out after its booked create slot (the room the burst must leave)', async () => {
    const { supply, metrics } = await supplyWith({ createRatePerS: 20, createBurst: 1 });
    await Promise.all(Array.from({ length: 3 }, () => acquire(supply)));
    const late = await metrics.registry.getSingleMetricAsString('rf_sandbox_create_late_seconds');
    // One observation per create sent; on an idle loop each goes out within a few ms of its slot.
    expect(late).toContain('rf_sandbox_create_late_seconds_count 3');
    expect(late).toMatch(/rf_sandbox_create_late_seconds_bucket\{le="1"\} 3/);
  });

  it('adopts the sandbox of a create whose answer was lost, by its label, instead of creating a second one', async () => {
    const { supply, metrics } = await supplyWith({ createTimeoutMs: 400 });
    host.faults.configure({ controlPlane: { lostAnswer: { CreateSandbox: 1 } } });
    const sandbox = await acquire(supply);
    expect(host.faults.stats.lostAnswers).toBe(1);
    const made = await vefaas.listAllSandboxes({
      FunctionId: host.functionId,
      Metadata: { [FLEET_LABEL_KEY]: supply.fleetId },
    });
    expect(made.map((s) => s.Id)).toEqual([sandbox.sandboxId]);
    expect(made[0]?.Metadata?.[AGENT_ENV_LABEL_KEY]).toBe(`${sandbox.ticket}.1`);
    expect(await sandbox.env.communicate('echo adopted')).toBe('adopted\n');
    expect(await metrics.registry.getSingleMetricAsString('rf_sandbox_create_recovered_total')).toContain(
      'action="adopted"} 1',
    );
    expect(await metrics.registry.getSingleMetricAsString('rf_sandbox_creates_total')).toContain(
      'outcome="timeout"} 1',
    );
  });

  it('after a create that made nothing (a 5xx before acting), creates again under a new label in the same slot', async () => {
    const { supply } = await supplyWith();
    // The first CreateSandbox answers 500 without acting; the second goes through.
    let failedOnce = false;
    const real = vefaas.createSandbox.bind(vefaas);
    const spy = vi.spyOn(vefaas, 'createSandbox').mockImplementation(async (req, opts) => {
      if (!failedOnce) {
        failedOnce = true;
        host.faults.configure({ controlPlane: { errorRate: 1 } });
        try {
          return await real(req, opts);
        } finally {
          host.faults.configure({});
        }
      }
      return real(req, opts);
    });
    try {
      const sandbox = await acquire(supply);
      expect(spy).toHaveBeenCalledTimes(2);
      expect(spy.mock.calls.map(([req]) => req.Metadata?.[AGENT_ENV_LABEL_KEY])).toEqual([
        `${sandbox.ticket}.1`,
        `${sandbox.ticket}.2`,
      ]);
      expect(spy.mock.calls.every(([, opts]) => opts?.once === true)).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('waits out platform 429s: the fleet rate drops, every acquisition succeeds, none is failed', async () => {
    const { supply, metrics } = await supplyWith({
      createRatePerS: 40,
      createBurst: 8,
      maxSandboxes: 20,
      maxStarting: 20,
    });
    host.faults.configure({ throttle: { ratePerSecond: 8, burst: 2 } });
    const before = host.faults.stats;
    const sandboxes = await Promise.all(Array.from({ length: 12 }, () => acquire(supply)));
    expect(new Set(sandboxes.map((s) => s.sandboxId)).size).toBe(12);
    expect(host.faults.stats.throttled).toBeGreaterThan(before.throttled);
    expect(await metrics.registry.getSingleMetricAsString('rf_sandbox_creates_total')).toMatch(
      /outcome="throttled"} [1-9]/,
    );
    expect((await supply.limiter.peek('default')).ratePerS).toBeLessThan(40);
    // Nothing extra was created: one sandbox per acquisition.
    expect(host.faults.stats.createsAdmitted - before.createsAdmitted).toBe(12);
  });

  it('waits for a slot while the live cap is full, and gives up as SANDBOX_ACQUIRE_TIMEOUT (infra) when none frees', async () => {
    const { supply } = await supplyWith({ maxSandboxes: 1, acquireTimeoutMs: 300 });
    await acquire(supply);
    const started = performance.now();
    const err = (await supply.acquire(request()).catch((e: unknown) => e)) as RolloutError;
    expect(err).toMatchObject({ code: 'SANDBOX_ACQUIRE_TIMEOUT', class: 'infra', retryable: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect((await supply.leases.counts()).live).toBe(1);
  });

  it('a waiter gets the slot a release frees', async () => {
    const { supply } = await supplyWith({ maxSandboxes: 1 });
    const first = await acquire(supply);
    const waiting = supply.acquire({ ...request(), jobId: 'second' });
    await vi.waitFor(async () => expect((await supply.leases.counts()).waiters).toBe(1));
    await first.release();
    const second = await waiting;
    held.push(second);
    expect(second.sandboxId).not.toBe(first.sandboxId);
    expect(await supply.leases.counts()).toMatchObject({ live: 1, waiters: 0 });
  });

  it('an attempt for a slot is one slot-script call: warm claim, reservation and the waiter entry go together', async () => {
    // No poll within the test: the waiter tries again only when the release wakes it.
    const { supply } = await supplyWith({ maxSandboxes: 1, acquireTimeoutMs: 3_600_000 }, undefined, {
      first: 600_000,
      max: 600_000,
    });
    const first = await acquire(supply);
    // One script per slot operation (leases/slots/<op>.lua): a call is told by its script's sha.
    const slotsDir = new URL('../packages/sandbox/src/leases/slots/', import.meta.url);
    const opOf = new Map(
      readdirSync(slotsDir)
        .filter((file) => file.endsWith('.lua'))
        .map((file) => [LuaScript.load(new URL(file, slotsDir)).sha, file.slice(0, -'.lua'.length)]),
    );
    const ops: string[] = [];
    const evalsha = redis.evalsha.bind(redis) as (...args: unknown[]) => unknown;
    const spy = vi.spyOn(redis, 'evalsha').mockImplementation(((...args: unknown[]) => {
      const op = opOf.get(String(args[0]));
      if (op !== undefined) ops.push(op);
      return evalsha(...args);
    }) as RedisClient['evalsha']);
    try {
      const waiting = supply.acquire({ ...request(), jobId: 'second' });
      await vi.waitFor(async () => expect((await supply.leases.counts()).waiters).toBe(1));
      await first.release();
      held.push(await waiting);
    } finally {
      spy.mockRestore();
    }
    // Refused (and counted as waiting), woken by the release, granted (and no longer waiting); the updates are the
    // create's label and leaving the starting cap. Before: a claim before each reservation, a wait after the
    // refusal and an unwait after the grant — seven calls where three do.
    expect(ops.filter((op) => op !== 'counts' && op !== 'release')).toEqual(['reserve', 'reserve', 'update', 'update']);
    expect(await supply.leases.counts()).toMatchObject({ live: 1, waiters: 0 });
  }, 20_000);

  it('a release in another process wakes a waiter at once, long before its next poll', async () => {
    const { supply: holder, keys } = await supplyWith({ maxSandboxes: 1 });
    // The waiter would poll again only after ten minutes: only the wake can hand it the slot within the test.
    const { supply: waiter } = await supplyWith({ maxSandboxes: 1, acquireTimeoutMs: 3_600_000 }, keys, {
      first: 600_000,
      max: 600_000,
    });
    const first = await acquire(holder);
    const waiting = waiter.acquire({ ...request(), jobId: 'second' });
    await vi.waitFor(async () => expect((await waiter.leases.counts()).waiters).toBe(1));
    await first.release();
    const second = await waiting;
    held.push(second);
    expect(await waiter.leases.counts()).toMatchObject({ live: 1, waiters: 0 });
  }, 20_000);

  it('an aborted acquisition rejects with the abort reason and leaks no slot', async () => {
    const { supply } = await supplyWith({ maxSandboxes: 1 });
    await acquire(supply);
    const controller = new AbortController();
    const waiting = supply.acquire({ ...request(), signal: controller.signal });
    await vi.waitFor(async () => expect((await supply.leases.counts()).waiters).toBe(1));
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect((await supply.leases.counts()).live).toBe(1);
  });

  it("a held sandbox stops listening to its holder's signal once released or handed over, and a failed acquire does too", async () => {
    // The holder's signal may be long-lived (an API session's, the worker's shutdown): each sandbox's link must go.
    const { supply } = await supplyWith({});
    const shutdown = new AbortController();
    const released = await acquire(supply, { signal: shutdown.signal });
    const handedOver = await acquire(supply, { signal: shutdown.signal });
    expect(getEventListeners(shutdown.signal, 'abort').length).toBeGreaterThan(0);
    await released.release();
    handedOver.handOver();
    await handedOver.env.close();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    host.faults.configure({ controlPlane: { answer: { CreateSandbox: { code: 'InvalidParameter', status: 400 } } } });
    await expect(supply.acquire({ ...request(), signal: shutdown.signal })).rejects.toMatchObject({
      code: 'VEFAAS_BAD_REQUEST',
    });
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    expect(shutdown.signal.aborted).toBe(false);
  });

  it('reports a lost lease to onLost (the reaper may kill the sandbox), and an idle session as SANDBOX_IDLE', async () => {
    const { supply, keys } = await supplyWith({ leaseTtlMs: 600 });
    const lost = vi.fn();
    const sandbox = await acquire(supply, { onLost: lost });
    await redis.del(keys.lease(sandbox.ticket));
    await vi.waitFor(() => expect(lost).toHaveBeenCalledTimes(1), { timeout: 3_000, interval: 20 });
    expect(lost.mock.calls[0]?.[0]).toMatchObject({ code: 'LEASE_LOST' });

    const idle = vi.fn();
    const session = await acquire(supply, { role: 'session', idleTimeoutMs: 300, onLost: idle });
    session.touch();
    await vi.waitFor(() => expect(idle).toHaveBeenCalledTimes(1), { timeout: 3_000, interval: 20 });
    expect(idle.mock.calls[0]?.[0]).toMatchObject({ code: 'SANDBOX_IDLE' });
    expect(['gone', 'Terminating']).toContain(await statusOf(session.sandboxId));
    expect(await redis.exists(keys.lease(session.ticket))).toBe(0);
  });
});

describe('SandboxSupply readiness', () => {
  /**
   * CreateSandbox answers at once; the instance starts 6 s later. A fixed 100 ms loop would probe ~60 times and,
   * asking the control plane each time the gateway does not know the instance, Describe as often. Paced by the
   * wait: each probe pause a tenth of the time waited so far, at least 100 ms (about 30 probes over 6 s, the
   * sandbox found at most 0.6 s late instead of up to 2 s with pauses of 100 ms × 1.5ⁿ), DescribeSandbox 1 s,
   * 2 s, 4 s apart.
   */
  const COLD_MS = 6_000;

  async function acquireSlowStart(
    unknownToGateway: boolean,
  ): Promise<{ calls: Record<string, number>; readyMs: number }> {
    const slow = await startVefaasLocal({
      isolation: 'emulated',
      logger: silent,
      createReturns: 'immediately',
      faults: { coldStart: { delayMs: COLD_MS, unknownToGateway } },
    });
    const client = createVefaasClient({
      endpoint: slow.controlPlaneUrl,
      region: slow.region,
      credentials: { accessKeyId: slow.accessKeyId, secretAccessKey: slow.secretAccessKey },
    });
    const prefix = `{rf-test-${randomUUID()}}`;
    prefixes.push(prefix);
    try {
      const supply = await createSandboxSupply({
        redis,
        keys: createKeyspace(prefix),
        targets: [
          { id: 'default', target: { vefaas: client, functionId: slow.functionId, gatewayUrl: slow.gatewayUrl } },
        ],
        workerId: 'test-worker',
        logger: silent,
        limits: LIMITS,
      });
      const started = performance.now();
      const sandbox = await supply.acquire(request());
      const readyMs = performance.now() - started;
      const calls = slow.faults.calls;
      try {
        expect(await sandbox.env.communicate('echo up')).toBe('up\n');
      } finally {
        await sandbox.release();
      }
      return { calls, readyMs };
    } finally {
      await client.close();
      await slow.close();
    }
  }

  function expectBackedOff({ calls, readyMs }: { calls: Record<string, number>; readyMs: number }): void {
    expect(calls['cp:CreateSandbox']).toBe(1);
    // Pauses grow with the wait: ~11 probes in the first second, ~20 over the next five.
    expect(calls['gw:/is_alive']).toBeGreaterThanOrEqual(15);
    expect(calls['gw:/is_alive']).toBeLessThanOrEqual(40);
    // The sandbox is taken at most a tenth of its start time (one probe gap) after it started, plus set-up.
    expect(readyMs).toBeGreaterThanOrEqual(COLD_MS);
    expect(readyMs).toBeLessThan(COLD_MS + 0.1 * COLD_MS + 1_000);
  }

  it('paces /is_alive probes of a slow cold start by the time waited: ready soon after it started, for few probes', async () => {
    const seen = await acquireSlowStart(false);
    expectBackedOff(seen);
    // The gateway said "starting" (503): nothing to ask the control plane.
    expect(seen.calls['cp:DescribeSandbox'] ?? 0).toBe(0);
  });

  it('while the gateway does not know the starting instance, asks DescribeSandbox with back-off too', async () => {
    const seen = await acquireSlowStart(true);
    expectBackedOff(seen);
    expect(seen.calls['cp:DescribeSandbox']).toBeGreaterThanOrEqual(2);
    expect(seen.calls['cp:DescribeSandbox']).toBeLessThanOrEqual(5);
  });
});
