/**
 * Sandbox slots and their leases in Redis: the fleet-wide live and starting caps, ownership of every sandbox,
 * and the warm pool. Every operation is one call of its own script, slots/<op>.lua (atomic, Redis server time);
 * see slots/includes/slot-keys.lua for the key layout. A lease is a hash with a TTL: it is alive exactly as long as Redis keeps the key, so
 * liveness never depends on comparing two machines' clocks, and a renewal can never bring back a lease that
 * has expired (renew only extends a key that still exists and is still ours).
 */
import { LuaScript, type Keyspace, type RedisClient, type ScriptArg } from '@rollout-fleet/shared';

const slotScript = (op: string): LuaScript => LuaScript.load(new URL(`./slots/${op}.lua`, import.meta.url));
const SLOTS = {
  reserve: slotScript('reserve'),
  renew: slotScript('renew'),
  update: slotScript('update'),
  release: slotScript('release'),
  offer: slotScript('offer'),
  claim: slotScript('claim'),
  withdraw: slotScript('withdraw'),
  wait: slotScript('wait'),
  unwait: slotScript('unwait'),
  counts: slotScript('counts'),
  pool: slotScript('pool'),
  orphans: slotScript('orphans'),
  now: slotScript('now'),
};

export type SandboxRole = 'main' | 'eval' | 'warm' | 'session' | 'backup';

/** What a lease records besides its slot bookkeeping (all strings: it is a Redis hash). */
export interface LeaseFields {
  worker?: string;
  job?: string;
  run?: string;
  role?: SandboxRole;
  /** Label of the CreateSandbox call in flight (`rf-env`), so the reaper spares the sandbox it is making. */
  label?: string;
  /** SWE-ReX token of a warm sandbox, so whoever claims it can talk to it. Never logged. */
  auth?: string;
  /**
   * Milliseconds left of a warm sandbox's platform lifetime (the creating process's estimate, counted from before
   * CreateSandbox: never late). The slot scripts keep it as a point in Redis server time (`lifetime_ends_at`) and a
   * claim returns what is left at that moment, so whoever claims the sandbox calls SetSandboxTimeout only when the
   * end is near, and no two machines' clocks are ever compared.
   */
  lifetime_left_ms?: string;
}

export interface Lease extends LeaseFields {
  ticket: string;
  /** Random per holder: renewals and releases by anyone else are refused. */
  owner: string;
  target: string;
  spec: string;
  /** Empty until CreateSandbox has answered. */
  sandbox: string;
  /** Server ms at which a warm sandbox became ready (warm pool only). */
  ready_at?: string;
  /** Server ms at which the platform ends a warm sandbox's lifetime (from `lifetime_left_ms`). */
  lifetime_ends_at?: string;
}

export type ReserveOutcome =
  | { ok: true; live: number; starting: number; claimed?: undefined }
  /** A ready warm sandbox of the spec was claimed instead (`claim`): its slot and lease are the caller's now. */
  | { ok: true; claimed: Lease }
  | {
      ok: false;
      reason: 'live' | 'starting' | 'yield' | 'pool' | 'spec';
      live: number;
      starting: number;
      ready: number;
    };

export interface SlotCounts {
  live: number;
  starting: number;
  waiters: number;
  ready: number;
  warming: number;
}

export interface PoolEntry {
  ticket: string;
  spec: string;
  state: 'warming' | 'ready';
}

export interface ListedSandbox {
  sandboxId: string;
  /** The ticket part of its `rf-env` label; '' when it carries none. */
  ticket: string;
  /** Its whole `rf-env` label. */
  label: string;
}

/** Lease fields as the scripts take them: name -> string (a Redis hash), unset ones left out. */
function fieldTable(fields: LeaseFields | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields ?? {})) if (value !== undefined) out[name] = String(value);
  return out;
}

function pairsToObject(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

export class LeaseStore {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #ttlMs: number;

  constructor(redis: RedisClient, keys: Keyspace, options: { ttlMs: number }) {
    this.#redis = redis;
    this.#keys = keys;
    this.#ttlMs = options.ttlMs;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** The channel `release` publishes a waiter on when it frees a slot while acquirers wait (slot-waker.ts). */
  get slotFreedChannel(): string {
    return `${this.#keys.slotBase()}slot-freed`;
  }

  /**
   * Takes a slot if the live and starting caps allow. A warm fill (`warm`) also yields to anyone waiting for
   * a slot, and needs the pool below `poolMax` sandboxes and below `specTarget` of its spec.
   * `claim`: first claim a ready warm sandbox of `spec`, as `claim` does. `waiter`: the acquirer counts as waiting
   * for `ttlMs` when no slot is granted (as `wait`), and no longer once one is (as `unwait`). Both in the same
   * round trip: an acquirer's attempt is one call, not up to four.
   */
  async reserve(o: {
    ticket: string;
    owner: string;
    target: string;
    spec: string;
    maxLive: number;
    maxStarting: number;
    warm?: { poolMax: number; specTarget: number };
    claim?: boolean;
    waiter?: { id: string; ttlMs: number };
    fields?: LeaseFields;
  }): Promise<ReserveOutcome> {
    // One encoded request (reserve.lua's header), not fourteen positional arguments.
    const request = JSON.stringify({
      ticket: o.ticket,
      owner: o.owner,
      ttl: this.#ttlMs,
      maxLive: o.maxLive,
      maxStarting: o.maxStarting,
      target: o.target,
      spec: o.spec,
      ...(o.warm ? { warm: { poolMax: o.warm.poolMax, specTarget: o.warm.specTarget } } : {}),
      ...(o.claim ? { claim: true } : {}),
      ...(o.waiter ? { waiter: { id: o.waiter.id, ttl: o.waiter.ttlMs } } : {}),
      fields: fieldTable(o.fields),
    });
    const reply = (await this.#run(SLOTS.reserve, [request])) as [number, string, number | string[], number, number];
    const [ok, reason, live, starting, ready] = reply;
    if (ok === 2) return { ok: true, claimed: pairsToObject(live as string[]) as unknown as Lease };
    if (ok === 1) return { ok: true, live: live as number, starting };
    return {
      ok: false,
      reason: reason as 'live' | 'starting' | 'yield' | 'pool' | 'spec',
      live: live as number,
      starting,
      ready,
    };
  }

  /** Extends the lease by one TTL; false when it has expired or someone else holds it (never resurrects). */
  async renew(ticket: string, owner: string): Promise<boolean> {
    return (await this.#run(SLOTS.renew, [ticket, owner, this.#ttlMs])) === 1;
  }

  /** Records what the slot holds; `leaveStarting` moves it out of the starting cap. */
  async update(
    ticket: string,
    owner: string,
    o: { target: string; sandbox: string; spec: string; leaveStarting?: boolean; fields?: LeaseFields },
  ): Promise<boolean> {
    const update = JSON.stringify({
      target: o.target,
      sandbox: o.sandbox,
      spec: o.spec,
      ...(o.leaveStarting ? { leaveStarting: true } : {}),
      fields: fieldTable(o.fields),
    });
    return (await this.#run(SLOTS.update, [ticket, owner, update])) === 1;
  }

  /** Frees the slot (after the sandbox was killed). False when someone else holds it now. */
  async release(ticket: string, owner: string): Promise<boolean> {
    return (await this.#run(SLOTS.release, [ticket, owner])) === 1;
  }

  /** A warm sandbox is ready: it enters the pool of its spec. */
  async offer(ticket: string, owner: string, spec: string): Promise<boolean> {
    return (await this.#run(SLOTS.offer, [ticket, owner, spec])) === 1;
  }

  /** Takes the oldest ready warm sandbox of `spec` ('*' = any spec) and makes `owner` its holder. */
  async claim(spec: string, owner: string, fields?: LeaseFields): Promise<Lease | undefined> {
    const reply = (await this.#run(SLOTS.claim, [spec, owner, this.#ttlMs, JSON.stringify(fieldTable(fields))])) as [
      number,
      string?,
      string[]?,
    ];
    if (reply[0] !== 1) return undefined;
    return pairsToObject(reply[2] ?? []) as unknown as Lease;
  }

  /** Takes an idle warm sandbox back out of the pool (to kill it); false when it was claimed meanwhile. */
  async withdraw(ticket: string, owner: string): Promise<boolean> {
    return (await this.#run(SLOTS.withdraw, [ticket, owner])) === 1;
  }

  /** Marks an acquirer as waiting for a slot for `ttlMs` (warm fills yield to waiters). */
  async wait(ticket: string, ttlMs: number): Promise<void> {
    await this.#run(SLOTS.wait, [ticket, ttlMs]);
  }

  async unwait(ticket: string): Promise<void> {
    await this.#run(SLOTS.unwait, [ticket]);
  }

  async counts(): Promise<SlotCounts> {
    const [live, starting, waiters, ready, warming] = (await this.#run(SLOTS.counts, [])) as number[];
    return {
      live: live ?? 0,
      starting: starting ?? 0,
      waiters: waiters ?? 0,
      ready: ready ?? 0,
      warming: warming ?? 0,
    };
  }

  async pool(): Promise<PoolEntry[]> {
    const flat = (await this.#run(SLOTS.pool, [])) as string[];
    return Object.entries(pairsToObject(flat)).map(([ticket, entry]) => {
      const [spec = '', state = 'warming'] = entry.split('\t');
      return { ticket, spec, state: state === 'ready' ? 'ready' : 'warming' };
    });
  }

  async get(ticket: string): Promise<Lease | undefined> {
    const fields = await this.#redis.hgetall(this.#keys.lease(ticket));
    return Object.keys(fields).length === 0 ? undefined : (fields as unknown as Lease);
  }

  /**
   * Which listed sandboxes to kill now: not owned by a live lease (neither by id nor as the create in
   * flight), and seen unowned for at least the grace (`unlabelledGraceMs` for sandboxes without a ticket).
   * Pass every listed sandbox of the fleet at once: records of sandboxes no longer listed are dropped.
   */
  async orphans(
    listed: readonly ListedSandbox[],
    o: { graceMs: number; unlabelledGraceMs: number },
  ): Promise<string[]> {
    const args: ScriptArg[] = [o.graceMs, o.unlabelledGraceMs];
    for (const s of listed) args.push(s.sandboxId, s.ticket, s.label);
    return (await this.#run(SLOTS.orphans, args)) as string[];
  }

  /** Sandboxes whose lease expired (their holder died), to be killed; each is handed out once. */
  async takeDoomed(max = 100): Promise<Array<{ target: string; sandboxId: string }>> {
    const popped = (await this.#redis.spop(this.#keys.doomed(), max)) as string[];
    return popped.map((entry) => {
      const [target = '', sandboxId = ''] = entry.split('\t');
      return { target, sandboxId };
    });
  }

  /** Puts a sandbox back on the doomed list (its kill failed; try again next pass). */
  async doom(target: string, sandboxId: string): Promise<void> {
    await this.#redis.sadd(this.#keys.doomed(), `${target}\t${sandboxId}`);
  }

  /** Redis server time, ms. */
  async serverTime(): Promise<number> {
    return Number(await this.#run(SLOTS.now, []));
  }

  /** Every slot script takes the same seven keys and the key base (slots/includes/slot-keys.lua). */
  #run(script: LuaScript, args: readonly ScriptArg[]): Promise<unknown> {
    const k = this.#keys;
    return script.run(
      this.#redis,
      [k.leases(), k.starting(), k.leaseTails(), k.doomed(), k.slotWaiters(), k.pool(), k.orphans()],
      [k.slotBase(), ...args],
    );
  }
}
