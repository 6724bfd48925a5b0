/**
 * Fleet-wide slots (leases/slots/*.lua) on real Redis: the live and starting caps, leases that free their slot when
 * Redis expires them, renewal that can never resurrect a lease, the warm pool's offer / claim / withdraw, and
 * racing and randomized interleavings from several connections. Expiry is Redis's own (TTLs of a few hundred
 * ms); waits are on conditions, never fixed sleeps.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createKeyspace,
  createRedis,
  deleteKeysMatching,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { LeaseStore } from './lease-store.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let redis: RedisClient;
const clients: RedisClient[] = [];
const prefixes: string[] = [];

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterEach(async () => {
  for (const prefix of prefixes.splice(0)) {
    await deleteKeysMatching(redis, `rf:${prefix}:*`);
  }
});
afterAll(() => {
  for (const c of [redis, ...clients]) c.disconnect();
});

function keyspace(): Keyspace {
  const prefix = `{rf-test-${randomUUID()}}`;
  prefixes.push(prefix);
  return createKeyspace(prefix);
}

function storeOn(keys: Keyspace, ttlMs = 60_000, client: RedisClient = redis): LeaseStore {
  return new LeaseStore(client, keys, { ttlMs });
}

function connection(): RedisClient {
  const c = createRedis(REDIS_URL);
  clients.push(c);
  return c;
}

const caps = { maxLive: 3, maxStarting: 2 };

async function reserve(
  store: LeaseStore,
  o: { owner?: string; warm?: boolean; spec?: string; maxLive?: number; maxStarting?: number } = {},
) {
  const ticket = randomUUID();
  const owner = o.owner ?? randomUUID();
  const outcome = await store.reserve({
    ticket,
    owner,
    target: 'default',
    spec: o.spec ?? 'spec-a',
    maxLive: o.maxLive ?? caps.maxLive,
    maxStarting: o.maxStarting ?? caps.maxStarting,
    ...(o.warm ? { warm: { poolMax: 100, specTarget: 100 } } : {}),
    fields: { worker: 'w', job: 'j', role: o.warm ? 'warm' : 'main' },
  });
  return { ticket, owner, outcome };
}

/** Reserves and marks the slot started (out of the starting cap), holding sandbox `sb-<ticket>`. */
async function started(store: LeaseStore, o: { spec?: string; warm?: boolean } = {}) {
  const slot = await reserve(store, { ...o, maxLive: 100, maxStarting: 100 });
  expect(slot.outcome.ok).toBe(true);
  await store.update(slot.ticket, slot.owner, {
    target: 'default',
    sandbox: `sb-${slot.ticket}`,
    spec: o.spec ?? 'spec-a',
    leaveStarting: true,
  });
  return slot;
}

describe('LeaseStore caps', () => {
  it('grants starting slots up to the starting cap and live slots up to the live cap', async () => {
    const store = storeOn(keyspace());
    const a = await reserve(store);
    const b = await reserve(store);
    expect([a.outcome.ok, b.outcome.ok]).toEqual([true, true]);
    // Two are starting: the starting cap (2) is full although the live cap (3) is not.
    expect((await reserve(store)).outcome).toMatchObject({ ok: false, reason: 'starting', live: 2, starting: 2 });
    expect(
      await store.update(a.ticket, a.owner, {
        target: 'default',
        sandbox: 'sb-a',
        spec: 'spec-a',
        leaveStarting: true,
      }),
    ).toBe(true);
    const c = await reserve(store);
    expect(c.outcome).toMatchObject({ ok: true, live: 3, starting: 2 });
    expect((await reserve(store)).outcome).toMatchObject({ ok: false, reason: 'live', live: 3 });
    expect(await store.release(b.ticket, b.owner)).toBe(true);
    expect((await reserve(store)).outcome.ok).toBe(true);
    expect(await store.counts()).toMatchObject({ live: 3, starting: 2 });
  });

  it('lets exactly maxLive of 40 racing reservations on four connections through', async () => {
    const keys = keyspace();
    const stores = Array.from({ length: 4 }, () => storeOn(keys, 60_000, connection()));
    const outcomes = await Promise.all(
      stores.flatMap((s) => Array.from({ length: 10 }, () => reserve(s, { maxLive: 10, maxStarting: 100 }))),
    );
    expect(outcomes.filter((o) => o.outcome.ok)).toHaveLength(10);
    expect(await stores[0]!.counts()).toMatchObject({ live: 10, starting: 10 });
  });

  it('refuses renewals and releases from anyone but the holder', async () => {
    const store = storeOn(keyspace());
    const slot = await reserve(store);
    expect(await store.renew(slot.ticket, 'someone-else')).toBe(false);
    expect(await store.release(slot.ticket, 'someone-else')).toBe(false);
    expect(await store.update(slot.ticket, 'someone-else', { target: 'default', sandbox: 'x', spec: 's' })).toBe(false);
    expect((await store.counts()).live).toBe(1);
    expect(await store.renew(slot.ticket, slot.owner)).toBe(true);
    expect(await store.release(slot.ticket, slot.owner)).toBe(true);
    expect((await store.counts()).live).toBe(0);
  });
});

describe('LeaseStore slot-freed wakes', () => {
  async function listen(store: LeaseStore): Promise<string[]> {
    const subscriber = connection();
    const heard: string[] = [];
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === store.slotFreedChannel) heard.push(message);
    });
    await subscriber.subscribe(store.slotFreedChannel);
    return heard;
  }

  it('a release while acquirers wait publishes one of them; with nobody (or only expired waiters) waiting, nothing', async () => {
    const keys = keyspace();
    const store = storeOn(keys);
    const heard = await listen(store);
    const quiet = await started(store);
    expect(await store.release(quiet.ticket, quiet.owner)).toBe(true);
    const expired = randomUUID();
    await store.wait(expired, 1);
    // The waiter's registration lapses on Redis's clock.
    const at = await store.serverTime();
    await vi.waitFor(async () => expect(await store.serverTime()).toBeGreaterThan(at + 1), { interval: 1 });
    const lapsed = await started(store);
    expect(await store.release(lapsed.ticket, lapsed.owner)).toBe(true);
    const waiters = [randomUUID(), randomUUID()];
    for (const waiter of waiters) await store.wait(waiter, 10_000);
    const freed = await started(store);
    expect(await store.release(freed.ticket, freed.owner)).toBe(true);
    // A refused release (not the holder) frees nothing and wakes nobody.
    const other = await started(store);
    expect(await store.release(other.ticket, 'someone-else')).toBe(false);
    // Published after every release above: once it is heard, so is anything they published.
    await redis.publish(store.slotFreedChannel, 'end');
    await vi.waitFor(() => expect(heard).toContain('end'));
    expect(heard).toHaveLength(2);
    expect(waiters).toContain(heard[0]);
    expect(await redis.zscore(keys.slotWaiters(), expired)).toBeNull();
  });

  it('racing releases on four connections while acquirers wait: one wake per release, each naming a waiter', async () => {
    const keys = keyspace();
    const stores = Array.from({ length: 4 }, () => storeOn(keys, 60_000, connection()));
    const heard = await listen(stores[0]!);
    const waiters = Array.from({ length: 5 }, () => randomUUID());
    await Promise.all(waiters.map((waiter, i) => stores[i % 4]!.wait(waiter, 60_000)));
    const slots = await Promise.all(Array.from({ length: 24 }, (_, i) => started(stores[i % 4]!)));
    const released = await Promise.all(slots.map((slot, i) => stores[(i + 1) % 4]!.release(slot.ticket, slot.owner)));
    expect(released.every(Boolean)).toBe(true);
    await vi.waitFor(() => expect(heard).toHaveLength(24));
    for (const member of heard) expect(waiters).toContain(member);
    // Once nobody waits, releases are silent again.
    await Promise.all(waiters.map((waiter) => stores[0]!.unwait(waiter)));
    const after = await started(stores[1]!);
    await stores[2]!.release(after.ticket, after.owner);
    const marker = await started(stores[1]!);
    await stores[0]!.wait('marker', 60_000);
    await stores[3]!.release(marker.ticket, marker.owner);
    await vi.waitFor(() => expect(heard).toHaveLength(25));
    expect(heard[24]).toBe('marker');
  });
});

describe('LeaseStore expiry (liveness is Redis key expiry)', () => {
  it('frees a slot whose holder stops renewing, and dooms its sandbox for the reaper', async () => {
    const keys = keyspace();
    const store = storeOn(keys, 300);
    const dead = await started(store);
    const alive = await started(store);
    const renewing = setInterval(() => void store.renew(alive.ticket, alive.owner), 80);
    try {
      await vi.waitFor(async () => expect((await store.counts()).live).toBe(1), { timeout: 5_000, interval: 50 });
    } finally {
      clearInterval(renewing);
    }
    expect(await store.takeDoomed()).toEqual([{ target: 'default', sandboxId: `sb-${dead.ticket}` }]);
    expect(await store.takeDoomed()).toEqual([]);
    expect(await redis.hexists(keys.leaseTails(), dead.ticket)).toBe(0);
  });

  it('never resurrects: a renewal after expiry fails and leaves no key and no index entry', async () => {
    const keys = keyspace();
    const store = storeOn(keys, 200);
    const slot = await started(store);
    await vi.waitFor(async () => expect(await redis.exists(keys.lease(slot.ticket))).toBe(0), {
      timeout: 5_000,
      interval: 20,
    });
    expect(await store.renew(slot.ticket, slot.owner)).toBe(false);
    expect(await redis.exists(keys.lease(slot.ticket))).toBe(0);
    expect((await store.counts()).live).toBe(0);
    expect(await redis.zscore(keys.leases(), slot.ticket)).toBeNull();
  });

  it("renewal racing expiry and the reaper's purge: a lease is either renewed (kept) or gone (doomed), never both", async () => {
    const keys = keyspace();
    const stores = [storeOn(keys, 60, connection()), storeOn(keys, 60, connection())];
    let seed = 42;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const slots = await Promise.all(Array.from({ length: 30 }, () => started(stores[0]!)));
    const renewed = new Map<string, boolean>();
    // Holders renew at random moments around the TTL while another connection purges (counts) at random.
    await Promise.all(
      slots.map(async (slot) => {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 120)));
        const ok = await stores[1]!.renew(slot.ticket, slot.owner);
        renewed.set(slot.ticket, ok);
      }),
    );
    await Promise.all(Array.from({ length: 5 }, () => stores[0]!.counts()));
    const doomed = new Set((await stores[0]!.takeDoomed(100)).map((d) => d.sandboxId));
    for (const slot of slots) {
      const alive = (await redis.exists(keys.lease(slot.ticket))) === 1;
      if (alive) {
        expect(renewed.get(slot.ticket)).toBe(true);
        expect(doomed.has(`sb-${slot.ticket}`)).toBe(false);
      }
      if (renewed.get(slot.ticket) === false) {
        expect(alive).toBe(false);
        // Once Redis's purge ran, a lapsed lease's sandbox is doomed exactly once.
        expect(doomed.has(`sb-${slot.ticket}`)).toBe(true);
      }
    }
    expect(renewed.size).toBe(30);
  });
});

describe('LeaseStore warm pool', () => {
  it('hands a ready warm sandbox to exactly one of several racing claimers, and makes it theirs', async () => {
    const keys = keyspace();
    const store = storeOn(keys);
    const warm = await started(store, { warm: true, spec: 'img-x' });
    expect(
      await store.update(warm.ticket, warm.owner, {
        target: 'default',
        sandbox: `sb-${warm.ticket}`,
        spec: 'img-x',
        fields: { auth: 'token' },
      }),
    ).toBe(true);
    expect(await store.offer(warm.ticket, warm.owner, 'img-x')).toBe(true);
    expect(await store.counts()).toMatchObject({ ready: 1, warming: 0 });
    const claimers = Array.from({ length: 6 }, () => ({
      owner: randomUUID(),
      store: storeOn(keys, 60_000, connection()),
    }));
    const claims = await Promise.all(
      claimers.map((c) => c.store.claim('img-x', c.owner, { job: 'job-1', role: 'main' })),
    );
    const won = claims.filter((c) => c !== undefined);
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({
      ticket: warm.ticket,
      sandbox: `sb-${warm.ticket}`,
      auth: 'token',
      job: 'job-1',
      role: 'main',
    });
    const winner = claimers[claims.findIndex((c) => c !== undefined)]!;
    // The warmer no longer holds it; the claimer does.
    expect(await store.renew(warm.ticket, warm.owner)).toBe(false);
    expect(await store.renew(warm.ticket, winner.owner)).toBe(true);
    expect(await store.counts()).toMatchObject({ live: 1, ready: 0, warming: 0 });
    expect(await store.claim('img-x', randomUUID())).toBeUndefined();
  });

  it("keeps a warm sandbox's lifetime as a point in server time and hands a claimer what is left of it", async () => {
    const keys = keyspace();
    const store = storeOn(keys);
    const serverMs = async (): Promise<number> => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    const warm = await started(store, { warm: true, spec: 'img-t' });
    const before = await serverMs();
    await store.update(warm.ticket, warm.owner, {
      target: 'default',
      sandbox: 'sb-t',
      spec: 'img-t',
      fields: { lifetime_left_ms: '600000' },
    });
    const after = await serverMs();
    const endsAt = Number((await store.get(warm.ticket))?.lifetime_ends_at);
    expect(endsAt).toBeGreaterThanOrEqual(before + 600_000);
    expect(endsAt).toBeLessThanOrEqual(after + 600_000);
    await store.offer(warm.ticket, warm.owner, 'img-t');
    const claimBefore = await serverMs();
    const claimed = await store.claim('img-t', randomUUID());
    const claimAfter = await serverMs();
    // What is left by the server's clock at the claim: no writer's or reader's epoch is involved.
    expect(Number(claimed?.lifetime_left_ms)).toBeLessThanOrEqual(endsAt - claimBefore);
    expect(Number(claimed?.lifetime_left_ms)).toBeGreaterThanOrEqual(endsAt - claimAfter);
    // A warm sandbox whose filler recorded no lifetime: the claimer is told nothing (and extends at once).
    const bare = await started(store, { warm: true, spec: 'img-u' });
    await store.update(bare.ticket, bare.owner, { target: 'default', sandbox: 'sb-u', spec: 'img-u' });
    await store.offer(bare.ticket, bare.owner, 'img-u');
    expect((await store.claim('img-u', randomUUID()))?.lifetime_left_ms).toBeUndefined();
  });

  it('claim and withdraw race for an idle warm sandbox: exactly one wins', async () => {
    const keys = keyspace();
    for (let round = 0; round < 10; round++) {
      const store = storeOn(keys, 60_000, connection());
      const warm = await started(store, { warm: true, spec: 'img-y' });
      await store.offer(warm.ticket, warm.owner, 'img-y');
      const [claimed, withdrawn] = await Promise.all([
        storeOn(keys, 60_000, connection()).claim('img-y', randomUUID()),
        store.withdraw(warm.ticket, warm.owner),
      ]);
      expect(Number(claimed !== undefined) + Number(withdrawn)).toBe(1);
    }
  });

  it('skips warm sandboxes whose lease expired (dooming them) and claims the next live one', async () => {
    const keys = keyspace();
    const short = storeOn(keys, 200);
    const long = storeOn(keys, 60_000);
    const stale = await started(short, { warm: true, spec: 'img-z' });
    await short.offer(stale.ticket, stale.owner, 'img-z');
    const fresh = await started(long, { warm: true, spec: 'img-z' });
    await long.offer(fresh.ticket, fresh.owner, 'img-z');
    await vi.waitFor(async () => expect(await redis.exists(keys.lease(stale.ticket))).toBe(0), {
      timeout: 5_000,
      interval: 20,
    });
    const claimed = await long.claim('img-z', randomUUID());
    expect(claimed?.ticket).toBe(fresh.ticket);
    expect((await long.takeDoomed()).map((d) => d.sandboxId)).toEqual([`sb-${stale.ticket}`]);
  });

  it('a warm fill yields to anyone waiting for a slot; a cold acquirer may evict an idle warm sandbox of any spec', async () => {
    const store = storeOn(keyspace());
    const waiter = randomUUID();
    await store.wait(waiter, 10_000);
    expect((await reserve(store, { warm: true })).outcome).toMatchObject({ ok: false, reason: 'yield' });
    await store.unwait(waiter);
    const warm = await reserve(store, { warm: true, spec: 'img-q', maxLive: 1 });
    expect(warm.outcome.ok).toBe(true);
    await store.update(warm.ticket, warm.owner, {
      target: 'default',
      sandbox: 'sb-q',
      spec: 'img-q',
      leaveStarting: true,
    });
    await store.offer(warm.ticket, warm.owner, 'img-q');
    // Live cap 1 is full with an idle warm sandbox of another spec: the refusal says so, and '*' claims it.
    expect((await reserve(store, { spec: 'img-other', maxLive: 1 })).outcome).toMatchObject({
      ok: false,
      reason: 'live',
      ready: 1,
    });
    const evictor = randomUUID();
    expect((await store.claim('*', evictor))?.sandbox).toBe('sb-q');
    expect(await store.release(warm.ticket, evictor)).toBe(true);
    expect((await reserve(store, { spec: 'img-other', maxLive: 1 })).outcome.ok).toBe(true);
  });
});

describe('LeaseStore reserve in one round trip', () => {
  it('claims a ready warm sandbox of the spec before taking a slot, even with the caps full', async () => {
    const store = storeOn(keyspace());
    const warm = await started(store, { warm: true, spec: 'img-c' });
    await store.update(warm.ticket, warm.owner, {
      target: 'default',
      sandbox: 'sb-c',
      spec: 'img-c',
      fields: { auth: 'token' },
    });
    await store.offer(warm.ticket, warm.owner, 'img-c');
    const owner = randomUUID();
    const base = {
      ticket: randomUUID(),
      owner,
      target: 'default',
      maxLive: 1,
      maxStarting: 1,
      claim: true,
      fields: { job: 'j2', role: 'main' as const },
    };
    // Another spec: nothing to claim, and the live cap (1) is full.
    expect(await store.reserve({ ...base, spec: 'img-other' })).toMatchObject({ ok: false, reason: 'live', ready: 1 });
    const claimed = await store.reserve({ ...base, spec: 'img-c' });
    expect(claimed).toMatchObject({
      ok: true,
      claimed: { ticket: warm.ticket, sandbox: 'sb-c', auth: 'token', owner, job: 'j2', role: 'main' },
    });
    expect(await store.renew(warm.ticket, owner)).toBe(true);
    expect(await store.counts()).toMatchObject({ live: 1, ready: 0 });
    // Without `claim` a ready warm sandbox is left alone.
    const again = await started(store, { warm: true, spec: 'img-c' });
    await store.offer(again.ticket, again.owner, 'img-c');
    expect(
      await store.reserve({ ...base, ticket: randomUUID(), spec: 'img-c', claim: false, maxLive: 10, maxStarting: 10 }),
    ).toMatchObject({ ok: true, live: 3 });
    expect(await store.counts()).toMatchObject({ ready: 1 });
  });

  it('counts a refused acquirer as waiting (warm fills yield to it) and a granted one no longer', async () => {
    const store = storeOn(keyspace());
    const holder = await reserve(store, { maxLive: 1 });
    expect(holder.outcome.ok).toBe(true);
    const waiter = { id: randomUUID(), ttlMs: 10_000 };
    const attempt = {
      owner: waiter.id,
      target: 'default',
      spec: 'spec-a',
      maxLive: 1,
      maxStarting: 1,
      claim: true,
      waiter,
    };
    expect(await store.reserve({ ...attempt, ticket: randomUUID() })).toMatchObject({ ok: false, reason: 'live' });
    expect((await store.counts()).waiters).toBe(1);
    expect((await reserve(store, { warm: true })).outcome).toMatchObject({ ok: false, reason: 'yield' });
    await store.release(holder.ticket, holder.owner);
    expect(await store.reserve({ ...attempt, ticket: randomUUID() })).toMatchObject({ ok: true, live: 1 });
    expect((await store.counts()).waiters).toBe(0);
  });
});

describe('LeaseStore warm pool order', () => {
  it('an eviction (claim of any spec) takes the most recently readied warm sandbox, the one wanted last', async () => {
    const store = storeOn(keyspace());
    const offered: string[] = [];
    for (const spec of ['img-1', 'img-2', 'img-3']) {
      const slot = await started(store, { warm: true, spec });
      await store.offer(slot.ticket, slot.owner, spec);
      offered.push(`sb-${slot.ticket}`);
      // ready_at is Redis's clock in ms: the next offer must come a millisecond later to be "more recent".
      const serverMs = async (): Promise<number> => {
        const [sec, usec] = await redis.time();
        return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
      };
      const at = await serverMs();
      await vi.waitFor(async () => expect(await serverMs()).toBeGreaterThan(at), { interval: 1 });
    }
    expect((await store.claim('*', randomUUID()))?.sandbox).toBe(offered[2]);
    expect((await store.claim('*', randomUUID()))?.sandbox).toBe(offered[1]);
    // A claim of one spec still takes that spec's oldest.
    expect((await store.claim('img-1', randomUUID()))?.sandbox).toBe(offered[0]);
  });

  it('a warm fill over its spec\'s demand is refused as "spec" (try the next spec), over the pool\'s bound as "pool"', async () => {
    const store = storeOn(keyspace());
    const fill = (spec: string, poolMax: number, specTarget: number) =>
      store.reserve({
        ticket: randomUUID(),
        owner: randomUUID(),
        target: 'default',
        spec,
        maxLive: 100,
        maxStarting: 100,
        warm: { poolMax, specTarget },
        fields: { role: 'warm' },
      });
    expect((await fill('img-a', 3, 2)).ok).toBe(true);
    expect((await fill('img-a', 3, 2)).ok).toBe(true);
    expect(await fill('img-a', 3, 2)).toMatchObject({ ok: false, reason: 'spec' });
    expect((await fill('img-b', 3, 2)).ok).toBe(true);
    expect(await fill('img-c', 3, 2)).toMatchObject({ ok: false, reason: 'pool' });
  });
});

describe('LeaseStore randomized interleavings', () => {
  it('keeps the caps and the indexes consistent under random reserve / renew / release / offer / claim from four connections', async () => {
    const keys = keyspace();
    const stores = Array.from({ length: 4 }, () => storeOn(keys, 150, connection()));
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const held: Array<{ ticket: string; owner: string; ready: boolean }> = [];
    const limits = { maxLive: 6, maxStarting: 3 };
    for (let round = 0; round < 40; round++) {
      const ops = Array.from({ length: 6 }, async () => {
        const store = stores[Math.floor(random() * stores.length)]!;
        const roll = random();
        const slot = held[Math.floor(random() * held.length)];
        if (roll < 0.35 || !slot) {
          const r = await reserve(store, { ...limits, warm: random() < 0.3, spec: random() < 0.5 ? 'a' : 'b' });
          if (r.outcome.ok) held.push({ ticket: r.ticket, owner: r.owner, ready: false });
        } else if (roll < 0.55) {
          await store.renew(slot.ticket, slot.owner);
        } else if (roll < 0.7) {
          if (
            await store.update(slot.ticket, slot.owner, {
              target: 'default',
              sandbox: `sb-${slot.ticket}`,
              spec: 'a',
              leaveStarting: true,
            })
          ) {
            slot.ready = (await store.offer(slot.ticket, slot.owner, 'a')) || slot.ready;
          }
        } else if (roll < 0.85) {
          const owner = randomUUID();
          const claimed = await store.claim(random() < 0.5 ? 'a' : '*', owner);
          if (claimed) held.push({ ticket: claimed.ticket, owner, ready: false });
        } else {
          await store.release(slot.ticket, slot.owner);
        }
      });
      await Promise.all(ops);
      const counts = await stores[0]!.counts();
      expect(counts.live).toBeLessThanOrEqual(limits.maxLive);
      expect(counts.starting).toBeLessThanOrEqual(limits.maxStarting);
      expect(counts.ready + counts.warming).toBeLessThanOrEqual(counts.live);
    }
    // Every live index entry has its lease key; every pooled ticket is live; every ready one is listed once.
    await stores[0]!.counts();
    const live = await redis.zrange(keys.leases(), 0, -1);
    for (const ticket of live) {
      const exists = await redis.exists(keys.lease(ticket));
      const score = Number(await redis.zscore(keys.leases(), ticket));
      // Either the key exists, or it expired after the last purge (its index score is in the past).
      if (exists === 0) expect(score).toBeLessThanOrEqual(Number((await redis.time())[0]) * 1000 + 1000);
    }
    const pool = await stores[0]!.pool();
    for (const entry of pool) expect(live).toContain(entry.ticket);
    const readyA = await redis.lrange(`${keys.slotBase()}pool-ready:a`, 0, -1);
    expect(new Set(readyA).size).toBe(readyA.length);
    for (const ticket of readyA) expect(pool.find((p) => p.ticket === ticket)?.state).toBe('ready');
  });
});
