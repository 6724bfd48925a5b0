/**
 * Sandbox ownership end to end: LeaseStore + Reaper on real Redis against vefaas-local (emulated sandboxes)
 * through the real signed VefaasClient and `reaperPlatformFor` (ListSandboxes by fleet id, KillSandbox), and
 * LeaseKeeper renewing a lease and moving the platform lifetime (SetSandboxTimeout) ahead of the deadline.
 * Each test has its own Redis prefix and so its own random fleet id: fleets never see each other's sandboxes.
 * Lease expiry is Redis's own (short TTLs here); tests wait on conditions, never on fixed sleeps.
 */
import { randomUUID } from 'node:crypto';
import {
  createRedis,
  type RedisClient,
  createKeyspace,
  createLogger,
  SandboxSpecSchema,
  type Keyspace,
  type RolloutError,
} from '@rollout-fleet/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AGENT_ENV_LABEL_KEY,
  AgentEnv,
  createVefaasClient,
  type VefaasClient,
  type VefaasTarget,
  FLEET_LABEL_KEY,
  LeaseKeeper,
  LeaseStore,
  Reaper,
  ensureFleetId,
  reaperPlatformFor,
  type ReaperPlatform,
} from '@rollout-fleet/sandbox';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
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

/** A fleet of its own: prefix, keyspace, random fleet id, lease store. */
async function fleet(options: { ttlMs?: number } = {}) {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  const keys: Keyspace = createKeyspace(prefix);
  const fleetId = await ensureFleetId(redis, keys);
  const leases = new LeaseStore(redis, keys, { ttlMs: options.ttlMs ?? MINUTE_MS });
  const platform = reaperPlatformFor(target, fleetId);
  const reaper = (extra: { graceMs?: number; unlabelledGraceMs?: number; platforms?: ReaperPlatform[] } = {}) =>
    new Reaper({ redis, keys, leases, platforms: [platform], logger: silent, graceMs: 0, ...extra });
  /** A sandbox with this fleet's label and the given create label (what the supply puts on each create). */
  const create = async (label = ''): Promise<string> => {
    const { SandboxId } = await vefaas.createSandbox({
      FunctionId: host.functionId,
      Timeout: 30,
      InstanceImageInfo: { Image: 'python', Command: 'python3 -m swerex.server --auth-token t', Port: 8000 },
      Metadata: { [FLEET_LABEL_KEY]: fleetId, ...(label ? { [AGENT_ENV_LABEL_KEY]: label } : {}) },
    });
    return SandboxId;
  };
  /** Takes a slot for a sandbox the way the supply does: lease first, then the create labelled with it. */
  const leased = async (o: { owner?: string; createCalls?: number } = {}) => {
    const ticket = randomUUID();
    const owner = o.owner ?? randomUUID();
    const reserved = await leases.reserve({
      ticket,
      owner,
      target: 'default',
      spec: 's',
      maxLive: 100,
      maxStarting: 100,
    });
    expect(reserved.ok).toBe(true);
    const label = `${ticket}.${o.createCalls ?? 1}`;
    await leases.update(ticket, owner, { target: 'default', sandbox: '', spec: 's', fields: { label } });
    const sandboxId = await create(label);
    await leases.update(ticket, owner, { target: 'default', sandbox: sandboxId, spec: 's', leaveStarting: true });
    return { ticket, owner, sandboxId, label };
  };
  return { keys, fleetId, leases, platform, reaper, create, leased };
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
  await vi.waitFor(async () => expect(['gone', 'Terminating']).toContain(await statusOf(sandboxId)), {
    timeout: 5_000,
    interval: 20,
  });
}

describe('Reaper against vefaas-local through reaperPlatformFor', () => {
  it('kills the sandbox of a lease Redis let expire (holder gone) and frees its slot; a renewed one is spared', async () => {
    const f = await fleet({ ttlMs: 400 });
    const dead = await f.leased();
    const alive = await f.leased();
    // The holder of `alive` keeps renewing; the holder of `dead` stopped (crashed).
    const renewing = setInterval(() => void f.leases.renew(alive.ticket, alive.owner), 100);
    try {
      await vi.waitFor(async () => expect(await f.leases.get(dead.ticket)).toBeUndefined(), {
        timeout: 5_000,
        interval: 50,
      });
      const report = await f.reaper().reapOnce();
      expect(report).toEqual({ ran: true, expired: [dead.sandboxId], orphans: [] });
      await expectKilled(dead.sandboxId);
      expect(await statusOf(alive.sandboxId)).toBe('Ready');
      expect((await f.leases.counts()).live).toBe(1);
      expect(await redis.zscore(f.keys.leases(), dead.ticket)).toBeNull();
    } finally {
      clearInterval(renewing);
    }
    // A renewal after expiry never brings the lease back.
    expect(await f.leases.renew(dead.ticket, dead.owner)).toBe(false);
    expect(await f.leases.get(dead.ticket)).toBeUndefined();
  });

  it('kills sandboxes of its fleet that no lease owns, after the grace; spares leased and foreign ones', async () => {
    const f = await fleet();
    const other = await fleet();
    const mine = await f.leased();
    const orphan = await f.create(`${randomUUID()}.1`);
    const foreign = await other.create(`${randomUUID()}.1`);
    expect((await f.platform.listFleet()).map((s) => s.sandboxId).sort()).toEqual([mine.sandboxId, orphan].sort());

    // First pass with a grace: the orphan is only noted (first seen, on Redis's clock).
    expect(await f.reaper({ graceMs: 300 }).reapOnce()).toEqual({ ran: true, expired: [], orphans: [] });
    expect(await statusOf(orphan)).toBe('Ready');
    expect(await redis.hexists(f.keys.orphans(), orphan)).toBe(1);
    const report = await vi.waitFor(
      async () => {
        const r = await f.reaper({ graceMs: 300 }).reapOnce();
        expect(r.orphans).toEqual([orphan]);
        return r;
      },
      { timeout: 5_000, interval: 100 },
    );
    expect(report.expired).toEqual([]);
    await expectKilled(orphan);
    expect(await statusOf(mine.sandboxId)).toBe('Ready');
    expect(await statusOf(foreign)).toBe('Ready');
    await Promise.all(
      [mine.sandboxId, foreign].map((id) => vefaas.killSandbox({ FunctionId: host.functionId, SandboxId: id })),
    );
  });

  it("spares the sandbox of a create still in flight (its label is the lease's), kills a stray of an earlier create call", async () => {
    const f = await fleet();
    const ticket = randomUUID();
    const owner = randomUUID();
    await f.leases.reserve({ ticket, owner, target: 'default', spec: 's', maxLive: 10, maxStarting: 10 });
    // Call 1 timed out (nothing found then); call 2 is in flight: its sandbox exists, its answer has not come.
    await f.leases.update(ticket, owner, {
      target: 'default',
      sandbox: '',
      spec: 's',
      fields: { label: `${ticket}.2` },
    });
    const stray = await f.create(`${ticket}.1`);
    const inFlight = await f.create(`${ticket}.2`);
    const report = await f.reaper().reapOnce();
    expect(report).toEqual({ ran: true, expired: [], orphans: [stray] });
    expect(await statusOf(inFlight)).toBe('Ready');
    await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId: inFlight });
  });

  it('gives a sandbox without a slot label the long grace (it may come from a create whose owner records it late)', async () => {
    const f = await fleet();
    const unlabelled = await f.create();
    const reaper = f.reaper({ graceMs: 0, unlabelledGraceMs: 10 * MINUTE_MS });
    expect(await reaper.reapOnce()).toEqual({ ran: true, expired: [], orphans: [] });
    expect(await statusOf(unlabelled)).toBe('Ready');
    expect(await f.reaper({ graceMs: 0, unlabelledGraceMs: 0 }).reapOnce()).toEqual({
      ran: true,
      expired: [],
      orphans: [unlabelled],
    });
    await expectKilled(unlabelled);
  });

  it('two fleets with different ids on one vefaas-local never reap each other', async () => {
    const a = await fleet({ ttlMs: 300 });
    const b = await fleet({ ttlMs: 300 });
    expect(a.fleetId).not.toBe(b.fleetId);
    const [aLeased, bLeased] = await Promise.all([a.leased(), b.leased()]);
    const [aOrphan, bOrphan] = await Promise.all([a.create(`${randomUUID()}.1`), b.create(`${randomUUID()}.1`)]);
    // A's lease expires; B's is renewed. Both reapers run with no grace at all.
    const renewing = setInterval(() => void b.leases.renew(bLeased.ticket, bLeased.owner), 80);
    try {
      await vi.waitFor(async () => expect(await a.leases.get(aLeased.ticket)).toBeUndefined(), {
        timeout: 5_000,
        interval: 50,
      });
      const [reportA, reportB] = await Promise.all([a.reaper().reapOnce(), b.reaper().reapOnce()]);
      expect(reportA).toEqual({ ran: true, expired: [aLeased.sandboxId], orphans: [aOrphan] });
      expect(reportB).toEqual({ ran: true, expired: [], orphans: [bOrphan] });
      await Promise.all([aLeased.sandboxId, aOrphan, bOrphan].map(expectKilled));
      expect(await statusOf(bLeased.sandboxId)).toBe('Ready');
    } finally {
      clearInterval(renewing);
    }
    await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId: bLeased.sandboxId });
  });

  it('lets only one of two racing reapers run a pass (fleet-wide lock), and frees the lock after it', async () => {
    const f = await fleet();
    const orphan = await f.create(`${randomUUID()}.1`);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inPass = new Promise<void>((resolve) => (entered = resolve));
    // The first reaper's pass stops half-way (listing the fleet) until the second one has tried.
    const held: ReaperPlatform = {
      id: 'default',
      kill: (id) => f.platform.kill(id),
      listFleet: async () => {
        entered();
        await gate;
        return f.platform.listFleet();
      },
    };
    const other = createRedis(REDIS_URL);
    try {
      const first = f.reaper({ platforms: [held] }).reapOnce();
      await inPass;
      const second = new Reaper({
        redis: other,
        keys: f.keys,
        leases: f.leases,
        platforms: [f.platform],
        logger: silent,
        graceMs: 0,
      });
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
    const f = await fleet({ ttlMs: 30_000 });
    await using env = new AgentEnv({
      target,
      sandbox: spec,
      metadata: { [FLEET_LABEL_KEY]: f.fleetId },
      logger: silent,
    });
    await env.start();
    const sandboxId = env.sandboxId!;
    const before = Date.parse(
      (await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).ExpireAt!,
    );
    expect(before - Date.now()).toBeLessThanOrEqual(4 * MINUTE_MS);

    const ticket = randomUUID();
    const owner = randomUUID();
    await f.leases.reserve({ ticket, owner, target: 'default', spec: 's', maxLive: 10, maxStarting: 10 });
    await f.leases.update(ticket, owner, { target: 'default', sandbox: sandboxId, spec: 's', leaveStarting: true });
    const deadline = Date.now() + 30 * MINUTE_MS;
    const lost = vi.fn();
    const extend = vi.fn((seconds: number) => env.extendLifetime(seconds));
    const keeper = new LeaseKeeper({
      leases: f.leases,
      ticket,
      owner,
      logger: silent,
      expiresAt: before,
      deadline,
      extendLifetime: extend,
      onLost: lost,
    });
    try {
      await redis.pexpire(f.keys.lease(ticket), 5_000);
      await keeper.beat();
      expect(lost).not.toHaveBeenCalled();
      expect(await redis.pttl(f.keys.lease(ticket))).toBeGreaterThan(20_000);
      expect(extend).toHaveBeenCalledTimes(1);
      const after = Date.parse(
        (await vefaas.describeSandbox({ FunctionId: host.functionId, SandboxId: sandboxId })).ExpireAt!,
      );
      // Deadline + 5 min margin, rounded up to whole minutes by SetSandboxTimeout.
      expect(after).toBeGreaterThanOrEqual(deadline + 5 * MINUTE_MS - 1_000);
      expect(after).toBeLessThan(deadline + 7 * MINUTE_MS);

      // Far from the new ExpireAt: the next beat only renews.
      await keeper.beat();
      expect(extend).toHaveBeenCalledTimes(1);

      // The slot was taken over (or the reaper dropped it): ownership is lost and reported once.
      await f.leases.release(ticket, owner);
      await keeper.beat();
      await keeper.beat();
      expect(lost).toHaveBeenCalledTimes(1);
      expect(lost.mock.calls[0]?.[0]).toMatchObject({ code: 'LEASE_LOST' });
    } finally {
      keeper.stop();
    }
  });
});
