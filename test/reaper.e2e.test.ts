/**
 * Sandbox ownership end to end: LeaseStore + Reaper on real Redis against vefaas-local (emulated sandboxes)
 * through the real signed VefaasClient and `reaperPlatformFor` (ListSandboxes by fleet label, KillSandbox);
 * LeaseKeeper renewing a lease and moving the platform lifetime (SetSandboxTimeout) ahead of the deadline.
 * Each test has its own Redis prefix and so its own fleet label: the fleets never see each other's sandboxes.
 */
import { randomUUID } from 'node:crypto';
import { createRedis, type RedisClient } from '@rollout-fleet/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AgentEnv,
  createKeyspace,
  createLogger,
  createVefaasClient,
  SandboxSpecSchema,
  type Keyspace,
  type RolloutError,
  type VefaasClient,
  type VefaasTarget,
} from '@rollout-fleet/shared';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { fleetLabelFor, LeaseKeeper, LeaseStore, Reaper, reaperPlatformFor, type ReaperPlatform } from '@rollout-fleet/worker';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const FLEET_LABEL_KEY = 'rf-fleet';
const MINUTE_MS = 60_000;
const silent = createLogger({ level: 'silent', format: 'json' });

let host: VefaasLocalHandle;
let vefaas: VefaasClient;
let target: VefaasTarget;
let redis: RedisClient;
const prefixes: string[] = [];

beforeAll(async () => {
  host = await startVefaasLocal({ isolation: 'emulated', logger: silent });
  vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    retry: false,
  });
  target = { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl };
  redis = createRedis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
});

afterEach(async () => {
  for (const prefix of prefixes.splice(0)) {
    const keys = await redis.keys(`rf:${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
  }
});

afterAll(async () => {
  redis?.disconnect();
  await vefaas?.close();
  await host?.close();
});

/** A fleet of its own: prefix, keyspace, fleet label, lease store on a movable clock. */
function fleet(options: { ttlMs?: number } = {}) {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  const keys: Keyspace = createKeyspace(prefix);
  const label = fleetLabelFor(prefix);
  const clock = { now: Date.now() };
  const leases = new LeaseStore(redis, keys, { ttlMs: options.ttlMs ?? MINUTE_MS, now: () => clock.now });
  const platform = reaperPlatformFor(target, label);
  const reaper = (extra: { now?: () => number; graceMs?: number; platform?: ReaperPlatform } = {}) =>
    new Reaper({ redis, keys, leases, platform, logger: silent, graceMs: MINUTE_MS, ...extra });
  const create = async (fleetLabel: string = label): Promise<string> => {
    const { SandboxId } = await vefaas.createSandbox({
      FunctionId: host.functionId,
      Timeout: 30,
      InstanceImageInfo: { Image: 'python', Command: 'python3 -m swerex.server --auth-token t', Port: 8000 },
      Metadata: { [FLEET_LABEL_KEY]: fleetLabel },
    });
    return SandboxId;
  };
  return { keys, label, clock, leases, platform, reaper, create };
}

/** Ready, or gone/going (Terminating, then ResourceNotFound). */
async function statusOf(sandboxId: string): Promise<string> {
  try {
    return (await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).Status;
  } catch (err) {
    if ((err as RolloutError).code === 'VEFAAS_NOT_FOUND') return 'gone';
    throw err;
  }
}

async function expectKilled(sandboxId: string): Promise<void> {
  await vi.waitFor(async () => expect(await statusOf(sandboxId)).toBe('gone'), { timeout: 5_000, interval: 20 });
}

describe('Reaper against vefaas-local through reaperPlatformFor', () => {
  it('kills a sandbox whose lease expired and drops the lease; a leased one is spared', async () => {
    const f = fleet();
    const [dead, alive] = await Promise.all([f.create(), f.create()]);
    await f.leases.acquire({ sandboxId: dead, workerId: 'w-crashed', jobId: 'j1' });
    // The worker holding `dead` stopped renewing; `alive`'s worker keeps renewing.
    f.clock.now += 2 * MINUTE_MS;
    const lease = await f.leases.acquire({ sandboxId: alive, workerId: 'w-ok', jobId: 'j2' });
    expect(await f.leases.expired()).toEqual([dead]);

    const report = await f.reaper({ now: () => f.clock.now }).reapOnce();
    expect(report).toEqual({ ran: true, expired: [dead], orphans: [] });
    await expectKilled(dead);
    expect(await f.leases.get(dead)).toBeUndefined();
    expect(await f.leases.count()).toBe(1);
    expect(await statusOf(alive)).toBe('Ready');
    expect(await f.leases.renew(lease)).toBe(true);
  });

  it('kills an unleased sandbox of its fleet once it is older than the grace period; spares leased and foreign ones', async () => {
    const f = fleet();
    const other = fleet();
    const [orphan, leased, foreign] = await Promise.all([f.create(), f.create(), other.create()]);
    await f.leases.acquire({ sandboxId: leased, workerId: 'w', jobId: 'j' });
    expect((await f.platform.listFleet()).map((s) => s.sandboxId).sort()).toEqual([orphan, leased].sort());

    // Ten minutes on: every sandbox is past the one-minute grace; the leased one's lease is still live in Redis.
    const report = await f.reaper({ now: () => Date.now() + 10 * MINUTE_MS }).reapOnce();
    expect(report).toEqual({ ran: true, expired: [], orphans: [orphan] });
    await expectKilled(orphan);
    expect(await statusOf(leased)).toBe('Ready');
    expect(await statusOf(foreign)).toBe('Ready');
    await Promise.all([leased, foreign].map((id) => vefaas.killSandbox({ FunctionId: host.functionId, SandboxId: id })));
  });

  it('spares an unleased sandbox younger than the grace period (its lease may be being written)', async () => {
    const f = fleet();
    const young = await f.create();
    const report = await f.reaper().reapOnce();
    expect(report).toEqual({ ran: true, expired: [], orphans: [] });
    expect(await statusOf(young)).toBe('Ready');
    // The same sandbox, seen after the grace period, is an orphan.
    expect(await f.reaper({ now: () => Date.now() + 2 * MINUTE_MS }).reapOnce()).toEqual({ ran: true, expired: [], orphans: [young] });
    await expectKilled(young);
  });

  it('lets only one of two racing reapers run a pass (fleet-wide lock), and frees the lock after it', async () => {
    const f = fleet();
    const orphan = await f.create();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inPass = new Promise<void>((resolve) => (entered = resolve));
    // The first reaper's pass stops half-way (listing the fleet) until the second one has tried.
    const held: ReaperPlatform = {
      kill: (id) => f.platform.kill(id),
      listFleet: async () => {
        entered();
        await gate;
        return f.platform.listFleet();
      },
    };
    const later = () => Date.now() + 10 * MINUTE_MS;
    const other = createRedis(REDIS_URL);
    try {
      const first = f.reaper({ now: later, platform: held }).reapOnce();
      await inPass;
      const second = new Reaper({ redis: other, keys: f.keys, leases: f.leases, platform: f.platform, logger: silent, graceMs: MINUTE_MS, now: later });
      expect(await second.reapOnce()).toEqual({ ran: false, expired: [], orphans: [] });
      expect(await redis.pttl(f.keys.reaperLock())).toBeGreaterThan(0);
      release();
      expect(await first).toEqual({ ran: true, expired: [], orphans: [orphan] });
      expect(await redis.exists(f.keys.reaperLock())).toBe(0);
      expect(await second.reapOnce()).toEqual({ ran: true, expired: [], orphans: [] });
    } finally {
      release();
      other.disconnect();
    }
    await expectKilled(orphan);
  });
});

describe('LeaseKeeper against vefaas-local', () => {
  const spec = SandboxSpecSchema.parse({ image: 'python', lifetime_s: 4 * 60, startup_timeout_s: 10 });

  it('renews the lease and moves ExpireAt past the deadline when the platform lifetime would end first', async () => {
    const f = fleet({ ttlMs: 30_000 });
    await using env = new AgentEnv({ target, sandbox: spec, metadata: { [FLEET_LABEL_KEY]: f.label }, logger: silent });
    await env.start();
    const sandboxId = env.sandboxId!;
    const before = Date.parse((await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).ExpireAt!);
    expect(before - Date.now()).toBeLessThanOrEqual(4 * MINUTE_MS);

    const lease = await f.leases.acquire({ sandboxId, workerId: 'w', jobId: 'j' });
    const acquiredUntil = lease.expiresAt;
    const deadline = Date.now() + 30 * MINUTE_MS;
    const lost = vi.fn();
    const extend = vi.fn((seconds: number) => env.extendLifetime(seconds));
    const keeper = new LeaseKeeper({ leases: f.leases, lease, logger: silent, expiresAt: before, deadline, extendLifetime: extend, onLost: lost });
    try {
      f.clock.now += 10_000;
      await keeper.beat();
      expect(lost).not.toHaveBeenCalled();
      expect(lease.expiresAt).toBe(acquiredUntil + 10_000);
      expect((await f.leases.get(sandboxId))?.expiresAt).toBe(lease.expiresAt);
      expect(extend).toHaveBeenCalledTimes(1);
      const after = Date.parse((await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).ExpireAt!);
      // Deadline + 5 min margin, rounded up to whole minutes by SetSandboxTimeout.
      expect(after).toBeGreaterThanOrEqual(deadline + 5 * MINUTE_MS - 1_000);
      expect(after).toBeLessThan(deadline + 7 * MINUTE_MS);

      // Far from the new ExpireAt: the next beat only renews.
      await keeper.beat();
      expect(extend).toHaveBeenCalledTimes(1);
      const unchanged = Date.parse((await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).ExpireAt!);
      expect(unchanged).toBe(after);

      // The reaper (or anyone) dropped the lease: ownership is lost and reported once.
      await f.leases.release(sandboxId);
      await keeper.beat();
      expect(lost).toHaveBeenCalledTimes(1);
      expect(lost.mock.calls[0]?.[0]).toMatchObject({ code: 'LEASE_LOST' });
    } finally {
      keeper.stop();
    }
  });
});
