/**
 * The sandbox supply: the one door to sandboxes for the whole fleet (episode replay, fresh eval sandboxes,
 * the policy loop, API sessions, straggler backups) and the only code in the fleet that calls CreateSandbox.
 * `acquire(request)` hands back a started sandbox with the tools installed, taken from the warm pool when one
 * of the same spec is ready, else created within the fleet-wide limits:
 *
 *   1. a slot: the live and starting caps, a lease in Redis (leases/slots/*.lua), renewed while held;
 *   2. a create slot: the fleet's create rate (create-rate/take.lua, GCRA + AIMD), booked, not polled for;
 *   3. CreateSandbox, sent once: a 429 lowers the fleet's rate and waits for the next slot; a timeout or a
 *      5xx looks the call up by its label and adopts or kills what it made (adopt-or-kill.ts);
 *   4. readiness (SWE-ReX /is_alive with back-off), the bash session, the tools.
 *
 * Waiting (for a slot, a create slot, after a 429) never spends an episode attempt; only a total wait beyond
 * the acquire timeout becomes SANDBOX_ACQUIRE_TIMEOUT (infra). The returned sandbox's `release()` kills it,
 * frees its slot and drops its lease; until then a heartbeat keeps the lease and moves the platform lifetime
 * ahead of the holder's deadline. Losing the lease (the reaper may kill the sandbox) is reported to `onLost`.
 */
import { randomUUID } from 'node:crypto';
import { AGENT_ENV_LABEL_KEY, AgentEnv } from '../agent-env/agent-env.js';
import { buildStartCommand } from '../agent-env/start-command.js';
import { checkSandboxEnvNames, createSandboxRequest } from '../agent-env/create-request.js';
import {
  RolloutError,
  abortableDelay,
  coerceError,
  specKey,
  type Keyspace,
  type Logger,
  type RedisClient,
  type SandboxSpec,
  type ToolName,
} from '@rollout-fleet/shared';
import type { Gauge, Histogram } from 'prom-client';
import { LeaseStore, type Lease, type LeaseFields, type SandboxRole } from '../leases/lease-store.js';
import { adoptOrKill, type AdoptOutcome } from './adopt-or-kill.js';
import { CreateRateLimiter } from './create-rate-limiter.js';
import { FLEET_LABEL_KEY, ensureFleetId } from '../leases/fleet-id.js';
import { LIFETIME_MARGIN_MS, LeaseKeeper } from './lease-keeper.js';
import { LostSignal } from './lost-signal.js';
import { SlotWaker } from './slot-waker.js';
import type { SupplyMetrics } from './supply-metrics.js';
import { TargetPool, type SupplyTarget, type TargetHealthOptions } from './target-pool.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export type { SandboxRole } from '../leases/lease-store.js';

export interface SandboxRequest {
  sandbox: SandboxSpec;
  tools: readonly ToolName[];
  role: SandboxRole;
  runId: string;
  jobId: string;
  /** Epoch ms until which the holder needs the sandbox; its platform lifetime is kept beyond it. */
  deadline: number;
  /** Cancels the acquisition (and is the sandbox's own signal afterwards: its calls abort with it). */
  signal?: AbortSignal;
  logger?: Logger;
  /** The lease was lost (the sandbox may be reaped under you) or the sandbox idled out: stop using it. */
  onLost?: (err: RolloutError) => void;
  /** Release the sandbox after this long without `touch()` (API sessions); `onLost` gets SANDBOX_IDLE. */
  idleTimeoutMs?: number;
  /** Default per-command timeout of the AgentEnv, seconds. @defaultValue 300 */
  defaultTimeoutS?: number;
}

export interface SuppliedSandbox {
  /** Started, session open, tools installed. */
  readonly env: AgentEnv;
  readonly sandboxId: string;
  /** The slot (lease) it is held under. */
  readonly ticket: string;
  readonly targetId: string;
  /** Came ready from the warm pool. */
  readonly warm: boolean;
  /** Milliseconds from acquire() to ready, waits included. */
  readonly acquireMs: number;
  /** Marks the sandbox as in use (restarts the idle timer). */
  touch(): void;
  /** Needs the sandbox until `deadline` now (epoch ms); the lifetime is extended on the next heartbeat. */
  extendDeadline(deadline: number): void;
  /** Kills the sandbox, frees its slot and drops its lease. Idempotent. */
  release(): Promise<void>;
  /**
   * Stops holding the sandbox WITHOUT killing it: someone else holds its slot now (a warm sandbox claimed
   * from the pool). Stops the heartbeat and the idle timer.
   */
  handOver(): void;
}

export interface SupplyLimits {
  /** Creates per second across the fleet (the AIMD ceiling). */
  createRatePerS: number;
  createBurst: number;
  createRecoverS: number;
  maxSandboxes: number;
  maxStarting: number;
  acquireTimeoutMs: number;
  /** One CreateSandbox call's timeout. */
  createTimeoutMs: number;
  leaseTtlMs: number;
}

export interface SupplyMetricsSink {
  supply: SupplyMetrics;
  liveSandboxes: Gauge;
  sandboxCreateSeconds: Histogram;
}

export interface SandboxSupplyOptions {
  redis: RedisClient;
  keys: Keyspace;
  targets: readonly SupplyTarget[];
  workerId: string;
  logger: Logger;
  limits: SupplyLimits;
  metrics?: SupplyMetricsSink;
  /** Delay before asking again for a slot when the caps are full: first, then doubling up to max. */
  slotPollMs?: { first: number; max: number };
  /** When a target counts as failing and how long it is drained. */
  targetHealth?: TargetHealthOptions;
}

/** Internal: a slot taken for a create (cold acquire or warm fill). */
interface HeldSlot {
  ticket: string;
  owner: string;
  target: SupplyTarget;
  spec: string;
}

export class SandboxSupply {
  readonly fleetId: string;
  readonly leases: LeaseStore;
  readonly limiter: CreateRateLimiter;
  readonly targets: TargetPool;
  readonly #o: SandboxSupplyOptions;
  readonly #held = new Set<Holder>();
  readonly #waker: SlotWaker;

  constructor(options: SandboxSupplyOptions & { fleetId: string }) {
    this.#o = options;
    this.fleetId = options.fleetId;
    const { limits } = options;
    this.leases = new LeaseStore(options.redis, options.keys, { ttlMs: limits.leaseTtlMs });
    this.limiter = new CreateRateLimiter(options.redis, options.keys, {
      ratePerS: limits.createRatePerS,
      burst: limits.createBurst,
      recoverS: limits.createRecoverS,
    });
    this.targets = new TargetPool(options.redis, options.keys, options.targets, options.targetHealth);
    this.#waker = new SlotWaker({
      redis: options.redis,
      channel: this.leases.slotFreedChannel,
      logger: options.logger,
    });
  }

  get workerId(): string {
    return this.#o.workerId;
  }

  get limits(): SupplyLimits {
    return this.#o.limits;
  }

  /** Sandboxes this process holds right now. */
  get held(): number {
    return this.#held.size;
  }

  async acquire(request: SandboxRequest): Promise<SuppliedSandbox> {
    checkSandboxEnvNames(request.sandbox);
    const logger = (request.logger ?? this.#o.logger).child({ role: request.role });
    const started = performance.now();
    const giveUpAt = Date.now() + this.#o.limits.acquireTimeoutMs;
    const spec = specKey(request.sandbox, request.tools);
    const owner = randomUUID();
    try {
      return await this.#acquireLoop({ request, logger, started, giveUpAt, spec, owner });
    } finally {
      this.#waker.unregister(owner);
    }
  }

  /** Warm claim, else a slot (waiting for one while the caps are full), then the create: `acquire` minus clean-up. */
  async #acquireLoop(o: {
    request: SandboxRequest;
    logger: Logger;
    started: number;
    giveUpAt: number;
    spec: string;
    owner: string;
  }): Promise<SuppliedSandbox> {
    const { request, logger, started, giveUpAt, spec, owner } = o;
    let slotPauseMs = this.#o.slotPollMs?.first ?? 100;
    let waiting = false;
    for (;;) {
      request.signal?.throwIfAborted();
      const target = await this.targets.pick();
      const ticket = randomUUID();
      // Registered before the reserve can mark it waiting: a wake published in between would otherwise be lost.
      this.#waker.register(owner);
      // One round trip: a ready warm sandbox of the spec if there is one, else a slot, else counted as waiting.
      const reserved = await this.leases.reserve({
        ticket,
        owner,
        target: target.id,
        spec,
        maxLive: this.#o.limits.maxSandboxes,
        maxStarting: this.#o.limits.maxStarting,
        claim: request.role !== 'warm',
        waiter: { id: owner, ttlMs: 3 * slotPauseMs + 5 * SECOND },
        fields: this.#fields(request),
      });
      if (reserved.ok) {
        this.#waker.unregister(owner);
        waiting = false;
        if (reserved.claimed) {
          const warm = await this.#useWarm({ lease: reserved.claimed, request, spec, owner, logger, started });
          if (warm === 'retry') continue;
          return warm;
        }
        try {
          return await this.#createHeld({ ticket, owner, target, spec }, request, { logger, giveUpAt, started });
        } catch (thrown) {
          // The slot's lease lapsed while creating (e.g. this process stalled): start over with a new slot.
          if (coerceError(thrown).code !== 'LEASE_LOST' || request.signal?.aborted) throw thrown;
          logger.warn({ err: thrown }, 'lost the slot while creating a sandbox; acquiring again');
          continue;
        }
      }
      // A full live cap with idle warm sandboxes of other specs: one of them makes room — once this acquirer has
      // waited one pause. Jobs that started with it are claiming those sandboxes right now (an RL batch starts
      // ~200 jobs at once on a pool made for them): evicting one then only sends its job to the back of the queue
      // for a slot, and wastes a create. The acquirer counts as waiting already (the reserve said so), so no warm
      // fill takes the slot the eviction frees (evict, refill, evict… wastes creates).
      if (reserved.reason === 'live' && reserved.ready > 0 && waiting && (await this.#evictOne(logger))) continue;
      if (Date.now() + slotPauseMs > giveUpAt)
        throw this.#timeout(logger, started, `the fleet's sandbox caps stayed full (${reserved.reason})`);
      waiting = true;
      const waited = performance.now();
      // Until a release anywhere in the fleet wakes this waiter (slot-waker.ts), or the poll comes round.
      const woken = await this.#waker.sleep(owner, slotPauseMs * (0.75 + Math.random() / 2), request.signal);
      this.#o.metrics?.supply.waitSeconds.inc({ reason: 'slot' }, (performance.now() - waited) / SECOND);
      if (!woken) slotPauseMs = Math.min(this.#o.slotPollMs?.max ?? 2 * SECOND, slotPauseMs * 2);
    }
  }

  /** Releases every sandbox this process holds (shutdown). */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.#held].map((h) => h.release()));
  }

  /** Stops listening for freed slots (the supply's own Redis connection); after `releaseAll` at shutdown. */
  async close(): Promise<void> {
    await this.#waker.close();
  }

  /**
   * Creates a sandbox in a slot already reserved, as `acquire` does after the slot: used by the warm pool.
   * The slot is released if this fails.
   */
  async createInSlot(
    slot: HeldSlot,
    request: SandboxRequest,
    o: {
      logger: Logger;
      giveUpAt: number;
      /** a create slot is already booked for the first call */ preBooked?: boolean;
    },
  ): Promise<SuppliedSandbox> {
    return this.#createHeld(slot, request, { ...o, started: performance.now() });
  }

  #fields(request: SandboxRequest, extra: LeaseFields = {}): LeaseFields {
    return { worker: this.#o.workerId, job: request.jobId, run: request.runId, role: request.role, ...extra };
  }

  #timeout(logger: Logger, started: number, why: string): RolloutError {
    const waitedS = Math.round((performance.now() - started) / SECOND);
    logger.warn({ waitedS }, `no sandbox: ${why}`);
    return new RolloutError(
      'SANDBOX_ACQUIRE_TIMEOUT',
      `no sandbox within ${this.#o.limits.acquireTimeoutMs / SECOND} s: ${why}`,
      {
        details: { waitedS },
      },
    );
  }

  /** Holds the slot while creating; on any failure the slot is freed (and whatever was created killed). */
  async #createHeld(
    slot: HeldSlot,
    request: SandboxRequest,
    o: { logger: Logger; giveUpAt: number; started: number; preBooked?: boolean },
  ): Promise<SuppliedSandbox> {
    const lost = new LostSignal(request.signal);
    const { signal } = lost;
    const lifetimeS = lifetimeFor(request.sandbox, request.deadline);
    // Counted from before the create: the platform's own count starts later, so this is never late.
    const expiresAt = Date.now() + lifetimeS * SECOND;
    let env: AgentEnv | undefined;
    const keeper = new LeaseKeeper({
      leases: this.leases,
      ticket: slot.ticket,
      owner: slot.owner,
      logger: o.logger,
      expiresAt,
      deadline: request.deadline,
      extendLifetime: async (seconds) => env?.extendLifetime(seconds),
      onLost: (err) => lost.lose(err),
    });
    let sandboxId: string | undefined;
    try {
      const created = await this.#create(slot, request, { ...o, signal, lifetimeS });
      sandboxId = created.sandboxId;
      env = AgentEnv.attach({
        target: slot.target.target,
        sandbox: { ...request.sandbox, lifetime_s: lifetimeS },
        sandboxId,
        authToken: created.authToken,
        defaultTimeoutS: request.defaultTimeoutS ?? 300,
        logger: o.logger,
        signal,
      });
      await env.ready();
      await env.installTools(request.tools);
      this.#o.metrics?.sandboxCreateSeconds.observe((performance.now() - created.createdAt) / SECOND);
      const fields: LeaseFields =
        request.role === 'warm'
          ? { auth: created.authToken, lifetime_left_ms: String(Math.max(0, expiresAt - Date.now())) }
          : {};
      await this.leases.update(slot.ticket, slot.owner, {
        target: slot.target.id,
        sandbox: sandboxId,
        spec: slot.spec,
        leaveStarting: true,
        fields,
      });
      signal.throwIfAborted();
      this.#o.metrics?.supply.acquireSeconds.observe({ source: 'cold' }, (performance.now() - o.started) / SECOND);
      return this.#hold({ slot, env, sandboxId, keeper, lost, request, warm: false, started: o.started });
    } catch (thrown) {
      keeper.stop();
      lost.dispose();
      const err = lost.reason ?? thrown;
      await this.#discard(slot, { env, sandboxId, logger: o.logger });
      throw err;
    }
  }

  /** Create slot (rate), CreateSandbox once, recovery by label; loops until a sandbox exists or time runs out. */
  async #create(
    slot: HeldSlot,
    request: SandboxRequest,
    o: { logger: Logger; giveUpAt: number; signal: AbortSignal; lifetimeS: number; preBooked?: boolean },
  ): Promise<{ sandboxId: string; authToken: string; createdAt: number }> {
    const metrics = this.#o.metrics?.supply;
    for (let call = 1; ; call++) {
      // After a failure the target is picked again: one that keeps failing is drained in favour of the others.
      if (call > 1) slot.target = await this.targets.pick();
      const { target } = slot.target;
      const due = call > 1 || !o.preBooked ? await this.#createSlot(slot.target, o) : undefined;
      const label = `${slot.ticket}.${call}`;
      if (
        !(await this.leases.update(slot.ticket, slot.owner, {
          target: slot.target.id,
          sandbox: '',
          spec: slot.spec,
          fields: { label },
        }))
      ) {
        throw new RolloutError('LEASE_LOST', `the lease of sandbox slot ${slot.ticket} expired before its create`);
      }
      const start = buildStartCommand(request.sandbox.command);
      const createdAt = performance.now();
      if (due !== undefined) metrics?.createLateSeconds.observe(Math.max(0, createdAt - due) / SECOND);
      try {
        const created = await target.vefaas.createSandbox(
          createSandboxRequest({
            functionId: target.functionId,
            sandbox: { ...request.sandbox, lifetime_s: o.lifetimeS },
            command: start.command,
            metadata: {
              [FLEET_LABEL_KEY]: this.fleetId,
              [AGENT_ENV_LABEL_KEY]: label,
              'rf-role': request.role,
              'rf-run': request.runId,
              'rf-worker': this.#o.workerId,
            },
          }),
          { once: true, timeoutMs: this.#o.limits.createTimeoutMs, signal: o.signal },
        );
        metrics?.creates.inc({ outcome: 'ok' });
        void this.targets.success(slot.target.id).catch(() => undefined);
        return { sandboxId: created.SandboxId, authToken: start.authToken, createdAt };
      } catch (thrown) {
        if (o.signal.aborted) {
          // The call may still make a sandbox: find and kill it now rather than leave it to the reaper.
          await adoptOrKill({ target, label, logger: o.logger, adopt: false }).catch(() => undefined);
          throw o.signal.reason;
        }
        const err = coerceError(thrown);
        void this.targets.failure(slot.target.id).catch(() => undefined);
        if (err.code === 'VEFAAS_THROTTLED') {
          metrics?.creates.inc({ outcome: 'throttled' });
          const rate = await this.limiter.drop(slot.target.id, rateOf(slot.target));
          metrics?.createRate.set({ target: slot.target.id }, rate);
          o.logger.info(
            { ratePerS: rate },
            'CreateSandbox throttled (429): the fleet create rate is lowered; waiting for the next create slot',
          );
          continue;
        }
        if (!err.retryable) throw err;
        metrics?.creates.inc({ outcome: err.code === 'VEFAAS_TIMEOUT' ? 'timeout' : 'error' });
        // The platform may have made the sandbox all the same: adopt it, never create a second one blindly.
        const found = await adoptOrKill({ target, label, logger: o.logger, adopt: true }).catch(
          (listErr: unknown): AdoptOutcome => {
            o.logger.warn(
              { err: coerceError(listErr) },
              'could not look up what a failed CreateSandbox made; the reaper will find it',
            );
            return { killed: [] };
          },
        );
        metrics?.createRecovered.inc({ action: 'killed' }, found.killed.length);
        if (found.adopted) {
          metrics?.createRecovered.inc({ action: 'adopted' });
          return { sandboxId: found.adopted, authToken: start.authToken, createdAt };
        }
        o.logger.warn({ err, target: slot.target.id }, 'CreateSandbox failed; trying again in the same slot');
        if (Date.now() > o.giveUpAt)
          throw this.#timeout(o.logger, createdAt, `CreateSandbox kept failing (${err.code})`);
      }
    }
  }

  /** Waits for this target's next create slot in the fleet-wide schedule; returns when it was due (performance.now()). */
  async #createSlot(
    target: SupplyTarget,
    o: { logger: Logger; giveUpAt: number; signal: AbortSignal },
  ): Promise<number> {
    const waited = performance.now();
    try {
      let rebooked = false;
      for (;;) {
        o.signal.throwIfAborted();
        const outcome = await this.limiter.take(target.id, rateOf(target));
        this.#o.metrics?.supply.createRate.set({ target: target.id }, outcome.ratePerS);
        const pause = outcome.booked ? outcome.waitMs : outcome.retryMs;
        if (Date.now() + pause > o.giveUpAt)
          throw this.#timeout(o.logger, waited, 'the fleet create rate left no create slot in time');
        const due = performance.now() + pause;
        if (pause > 0) await abortableDelay(pause, o.signal);
        if (!outcome.booked) continue;
        // A process that woke up late (a stalled event loop) would send creates booked apart all at once, and a
        // platform counts bursts: a slot missed by more than two intervals is given up and booked again, once.
        const lateMs = performance.now() - due;
        if (!rebooked && lateMs > Math.max(100, 2000 / outcome.ratePerS)) {
          rebooked = true;
          this.#o.metrics?.supply.createSlotsMissed.inc();
          continue;
        }
        return due;
      }
    } finally {
      this.#o.metrics?.supply.waitSeconds.inc({ reason: 'rate' }, (performance.now() - waited) / SECOND);
    }
  }

  /** A ready warm sandbox of this spec, claimed by the reserve, checked alive; 'retry' when it was dead. */
  async #useWarm(o: {
    lease: Lease;
    request: SandboxRequest;
    spec: string;
    owner: string;
    logger: Logger;
    started: number;
  }): Promise<SuppliedSandbox | 'retry'> {
    const { request, lease } = o;
    const target = this.targets.byId(lease.target);
    if (!target) {
      // Made by a process configured with another target list: it cannot be reached from here.
      o.logger.warn(
        { target: lease.target, sandboxId: lease.sandbox },
        'a warm sandbox of an unknown target; left to its lease expiry',
      );
      return 'retry';
    }
    const slot: HeldSlot = { ticket: lease.ticket, owner: o.owner, target, spec: o.spec };
    const lost = new LostSignal(request.signal);
    const { signal } = lost;
    const env = lease.auth
      ? AgentEnv.attach({
          target: target.target,
          sandbox: request.sandbox,
          sandboxId: lease.sandbox,
          authToken: lease.auth,
          sessionReady: true,
          defaultTimeoutS: request.defaultTimeoutS ?? 300,
          logger: o.logger,
          signal,
        })
      : undefined;
    if (!env || !(await env.probe({ timeoutMs: 5 * SECOND }))) {
      this.#o.metrics?.supply.warm.inc({ event: 'discarded' });
      o.logger.warn({ sandboxId: lease.sandbox }, 'a warm sandbox failed its liveness check; discarded');
      lost.dispose();
      await this.#discard(slot, { env, sandboxId: lease.sandbox, logger: o.logger });
      return 'retry';
    }
    // What is left of the sandbox's platform lifetime, by the Redis clock at the claim (the filler recorded it);
    // unknown (an older filler): assume it may be short, so the first beat extends it.
    const left = Number(lease.lifetime_left_ms ?? Number.NaN);
    const expiresAt = Date.now() + (Number.isFinite(left) ? left : 0);
    const keeper = new LeaseKeeper({
      leases: this.leases,
      ticket: lease.ticket,
      owner: o.owner,
      logger: o.logger,
      expiresAt,
      deadline: request.deadline,
      extendLifetime: (seconds) => env.extendLifetime(seconds),
      onLost: (err) => lost.lose(err),
    });
    // The claim renewed the lease already: beat now only if the lifetime must be extended now. A batch's claims
    // come ~200 at once; a SetSandboxTimeout each would load the control plane just as their episodes start.
    if (expiresAt - Date.now() < LIFETIME_MARGIN_MS) void keeper.beat();
    this.#o.metrics?.supply.warm.inc({ event: 'hit' });
    this.#o.metrics?.supply.acquireSeconds.observe({ source: 'warm' }, (performance.now() - o.started) / SECOND);
    return this.#hold({ slot, env, sandboxId: lease.sandbox, keeper, lost, request, warm: true, started: o.started });
  }

  /** Takes one idle warm sandbox (any spec) out of the pool and kills it, to free a slot. */
  async #evictOne(logger: Logger): Promise<boolean> {
    const owner = randomUUID();
    const lease = await this.leases.claim('*', owner, { worker: this.#o.workerId, role: 'warm' });
    if (!lease) return false;
    const target = this.targets.byId(lease.target);
    if (!target) return false;
    const slot: HeldSlot = { ticket: lease.ticket, owner, target, spec: lease.spec };
    this.#o.metrics?.supply.warm.inc({ event: 'evicted' });
    logger.info({ sandboxId: lease.sandbox, spec: lease.spec }, 'evicting an idle warm sandbox to make room');
    await this.#discard(slot, { sandboxId: lease.sandbox, logger });
    return true;
  }

  /** Kills what a slot holds (if anything) and frees the slot; when the kill fails, the lease is left to expire. */
  async #discard(
    slot: HeldSlot,
    o: { env?: AgentEnv | undefined; sandboxId?: string | undefined; logger: Logger },
  ): Promise<void> {
    try {
      if (o.env) await o.env.close();
      else if (o.sandboxId) await killQuietly(slot.target, o.sandboxId);
    } catch (err) {
      o.logger.warn(
        { err, sandboxId: o.sandboxId },
        'could not kill sandbox; its lease will expire and the reaper kill it',
      );
      return;
    }
    await this.leases
      .release(slot.ticket, slot.owner)
      .catch((err: unknown) => o.logger.warn({ err }, 'could not free a sandbox slot; it expires with its lease'));
  }

  #hold(o: {
    slot: HeldSlot;
    env: AgentEnv;
    sandboxId: string;
    keeper: LeaseKeeper;
    lost: LostSignal;
    request: SandboxRequest;
    warm: boolean;
    started: number;
  }): SuppliedSandbox {
    const logger = o.request.logger ?? this.#o.logger;
    const holder = new Holder({ ...o, logger, supply: this, onReleased: () => this.#held.delete(holder) });
    this.#held.add(holder);
    this.#o.metrics?.liveSandboxes.inc();
    return holder;
  }

  /** @internal used by Holder */
  async discardHeld(slot: HeldSlot, env: AgentEnv, logger: Logger): Promise<void> {
    this.#o.metrics?.liveSandboxes.dec();
    await this.#discard(slot, { env, sandboxId: env.sandboxId, logger });
  }

  /** @internal used by Holder */
  handedOver(): void {
    this.#o.metrics?.liveSandboxes.dec();
  }
}

interface HolderOptions {
  slot: HeldSlot;
  env: AgentEnv;
  sandboxId: string;
  keeper: LeaseKeeper;
  lost: LostSignal;
  request: SandboxRequest;
  warm: boolean;
  started: number;
  logger: Logger;
  supply: SandboxSupply;
  onReleased: () => void;
}

/** A held sandbox: its keeper, idle timer and idempotent release. */
class Holder implements SuppliedSandbox {
  readonly env: AgentEnv;
  readonly sandboxId: string;
  readonly ticket: string;
  readonly targetId: string;
  readonly warm: boolean;
  readonly acquireMs: number;
  readonly #o: HolderOptions;
  #idle: NodeJS.Timeout | undefined;
  #releasing: Promise<void> | undefined;

  constructor(o: HolderOptions) {
    this.#o = o;
    this.env = o.env;
    this.sandboxId = o.sandboxId;
    this.ticket = o.slot.ticket;
    this.targetId = o.slot.target.id;
    this.warm = o.warm;
    this.acquireMs = performance.now() - o.started;
    o.lost.onLost((err) => this.#lost(err));
    this.touch();
  }

  touch(): void {
    const idleMs = this.#o.request.idleTimeoutMs;
    if (idleMs === undefined || this.#releasing) return;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      const err = new RolloutError(
        'SANDBOX_IDLE',
        `sandbox ${this.sandboxId} idle for ${Math.round(idleMs / SECOND)} s; released`,
      );
      void this.release().finally(() => this.#o.request.onLost?.(err));
    }, idleMs);
    this.#idle.unref();
  }

  extendDeadline(deadline: number): void {
    this.#o.keeper.setDeadline(deadline);
  }

  handOver(): void {
    if (this.#releasing) return;
    this.#releasing = Promise.resolve();
    if (this.#idle) clearTimeout(this.#idle);
    this.#o.keeper.stop();
    this.#o.lost.dispose();
    this.#o.onReleased();
    this.#o.supply.handedOver();
  }

  release(): Promise<void> {
    this.#releasing ??= (async () => {
      if (this.#idle) clearTimeout(this.#idle);
      this.#o.keeper.stop();
      this.#o.lost.dispose();
      this.#o.onReleased();
      await this.#o.supply.discardHeld(this.#o.slot, this.env, this.#o.logger);
    })();
    return this.#releasing;
  }

  #lost(err: RolloutError): void {
    if (this.#releasing) return;
    this.#o.logger.error({ err, sandboxId: this.sandboxId }, 'sandbox lease lost');
    this.#o.request.onLost?.(err);
  }
}

function rateOf(target: SupplyTarget): { ratePerS?: number } {
  return target.createRatePerS === undefined ? {} : { ratePerS: target.createRatePerS };
}

async function killQuietly(target: SupplyTarget, sandboxId: string): Promise<void> {
  try {
    await target.target.vefaas.killSandbox({ FunctionId: target.target.functionId, SandboxId: sandboxId });
  } catch (thrown) {
    if (coerceError(thrown).code !== 'VEFAAS_NOT_FOUND') throw thrown;
  }
}

/** The platform lifetime: above the holder's deadline (plus margin), at least the spec's, at most a day. */
export function lifetimeFor(sandbox: SandboxSpec, deadline: number): number {
  const needS = Math.ceil((deadline - Date.now()) / SECOND) + (5 * MINUTE) / SECOND;
  return Math.min(24 * 60 * 60, Math.max(sandbox.lifetime_s, 3 * 60, needS));
}

/** Reads the fleet id (creating it the first time) and builds the supply. */
export async function createSandboxSupply(options: SandboxSupplyOptions): Promise<SandboxSupply> {
  const fleetId = await ensureFleetId(options.redis, options.keys);
  return new SandboxSupply({ ...options, fleetId });
}

export type { Lease };
