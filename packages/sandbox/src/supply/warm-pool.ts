/**
 * The warm pool's filler, run by every worker process: keeps ready sandboxes per spec (image, size, env,
 * tools) ahead of demand. Demand = the specs of the next waiting jobs (an RL group brings N samples of one
 * image at once) plus what runs announced they will submit next (`submit --announce`). Each tick it asks the
 * slot script for warm slots where the pool is short; the script decides fleet-wide, atomically: within the
 * live and starting caps, only when nobody waits for a slot, never beyond RF_WARM_POOL_MAX nor beyond the
 * spec's demand. A fill only takes a create slot that is free right now (booking horizon 0): warm creates
 * never delay anyone's cold create. Sandboxes are created with the tools installed and offered to the pool;
 * their leases are renewed by this process until someone claims one (claims check liveness first) or they sit
 * idle for RF_WARM_IDLE_S, or nothing has wanted their spec for ten ticks — then they are taken back and killed.
 * A pool sandbox is leased and reaped like any other: if this process dies, so do its warm sandboxes.
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { coerceError, readDemand, readSpec, type Keyspace, type Logger, type RedisClient } from '@rollout-fleet/shared';
import type { SandboxSupply, SuppliedSandbox } from './sandbox-supply.js';
import type { SupplyMetrics } from './supply-metrics.js';

const SECOND = 1000;

export interface WarmPoolOptions {
  supply: SandboxSupply;
  redis: RedisClient;
  keys: Keyspace;
  /** The episode queue, for the lookahead over waiting jobs (absent: announcements only). */
  queue?: Pick<Queue, 'getRanges'>;
  logger: Logger;
  /** Ready + warming sandboxes in the pool across the fleet (RF_WARM_POOL_MAX). */
  maxSize: number;
  /** A warm sandbox unclaimed this long is killed (RF_WARM_IDLE_S). */
  idleMs: number;
  /** Waiting jobs looked at (RF_WARM_LOOKAHEAD). @defaultValue 256 */
  lookahead?: number;
  /** @defaultValue 1000 ms */
  intervalMs?: number;
  /**
   * Warm creates this process runs at once. @defaultValue two seconds of the fleet's create rate (at least 8, at
   * most `maxSize`): the fleet-wide create rate and the pool's bounds limit warm creates; this must not, or a
   * pool refills at (inflight ÷ cold-start time) however fast the platform may create (8 at once filled a
   * 256-sandbox RL batch at ~30/s against a rate of 83/s in bench:fleet).
   */
  maxInflight?: number;
  metrics?: SupplyMetrics;
}

interface Offered {
  sandbox: SuppliedSandbox;
  owner: string;
  spec: string;
  readyAt: number;
}

export class WarmPool {
  readonly #o: WarmPoolOptions & { lookahead: number; intervalMs: number; maxInflight: number };
  readonly #offered = new Map<string, Offered>();
  #inflight = 0;
  /** Since when (performance.now) each spec in the pool has had no demand at all. */
  readonly #unwantedSince = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #stopping = false;
  readonly #fills = new Set<Promise<void>>();

  constructor(options: WarmPoolOptions) {
    const inflight = Math.min(options.maxSize, Math.max(8, Math.ceil(2 * options.supply.limits.createRatePerS)));
    this.#o = { lookahead: 256, intervalMs: SECOND, maxInflight: inflight, ...options };
  }

  /** Warm sandboxes this process holds in the pool right now. */
  get offered(): number {
    return this.#offered.size;
  }

  start(): void {
    if (this.#timer || this.#o.maxSize <= 0) return;
    this.#timer = setInterval(() => {
      if (this.#ticking) return;
      this.#ticking = this.tick()
        .catch((err: unknown) => this.#o.logger.warn({ err: coerceError(err) }, 'warm pool tick failed'))
        .finally(() => {
          this.#ticking = undefined;
        });
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  /** Stops filling, waits for fills in flight, and kills this process's unclaimed warm sandboxes. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#ticking;
    await Promise.allSettled([...this.#fills]);
    await Promise.allSettled([...this.#offered.keys()].map((ticket) => this.#takeBack(ticket, 'expired')));
  }

  /** One round: take back idle or surplus sandboxes, then fill where demand exceeds the pool. */
  async tick(): Promise<void> {
    const { supply, redis, keys, maxSize } = this.#o;
    const waiting = this.#o.queue
      ? await this.#o.queue.getRanges(['wait', 'prioritized'], 0, this.#o.lookahead - 1, true)
      : [];
    const demand = await readDemand({ redis, keys, waitingJobIds: waiting });
    const pool = await supply.leases.pool();
    const inPool = new Map<string, number>();
    for (const entry of pool) inPool.set(entry.spec, (inPool.get(entry.spec) ?? 0) + 1);

    const now = performance.now();
    for (const spec of new Set([...this.#offered.values()].map((o) => o.spec))) {
      if ((demand.get(spec) ?? 0) > 0) this.#unwantedSince.delete(spec);
      else if (!this.#unwantedSince.has(spec)) this.#unwantedSince.set(spec, now);
    }
    for (const [ticket, offered] of this.#offered) {
      const unwantedFor = now - (this.#unwantedSince.get(offered.spec) ?? now);
      // Idle too long; or nothing wants this spec any more (the batch is over, the announcement lapsed) for a
      // while — long enough that jobs just taken from the queue have claimed what they need.
      if (now - offered.readyAt > this.#o.idleMs || unwantedFor > 10 * this.#o.intervalMs)
        await this.#takeBack(ticket, 'expired');
    }
    for (const spec of this.#unwantedSince.keys())
      if (![...this.#offered.values()].some((o) => o.spec === spec)) this.#unwantedSince.delete(spec);

    // In the order the demand comes (the queue's order, then announcements in their episodes' order), each spec
    // up to its demand before the next: the sandboxes made first are the ones the next jobs claim. Spread over
    // every spec instead, each would be partly warm and the cold creates its jobs still need would find the cap
    // full of warm sandboxes wanted only later (and evict them: creates wasted).
    const short = [...demand.entries()]
      .map(([spec, wanted]) => ({
        spec,
        target: Math.min(wanted, maxSize),
        missing: Math.min(wanted, maxSize) - (inPool.get(spec) ?? 0),
      }))
      .filter((d) => d.missing > 0);
    for (const { spec, target, missing } of short) {
      for (let i = 0; i < missing && this.#inflight < this.#o.maxInflight && !this.#stopping; i++) {
        const outcome = await this.#fill(spec, target);
        // Another worker filled this spec meanwhile: on to the next one. Any other refusal ends the round.
        if (outcome === 'spec-full') break;
        if (outcome !== 'started') return;
      }
    }
  }

  /** Reserves a warm slot and starts creating into it; stops the round when the fleet says no. */
  async #fill(spec: string, target: number): Promise<'started' | 'spec-full' | 'refused'> {
    const { supply, redis, keys, logger } = this.#o;
    const record = await readSpec({ redis, keys, specKey: spec });
    if (!record) return 'refused';
    const ticket = randomUUID();
    const owner = randomUUID();
    const chosen = await supply.targets.pick();
    const reserved = await supply.leases.reserve({
      ticket,
      owner,
      target: chosen.id,
      spec,
      maxLive: supply.limits.maxSandboxes,
      maxStarting: supply.limits.maxStarting,
      warm: { poolMax: this.#o.maxSize, specTarget: target },
      fields: { worker: supply.workerId, role: 'warm' },
    });
    if (!reserved.ok) return reserved.reason === 'spec' ? 'spec-full' : 'refused';
    // Only a create slot free right now: a warm create must never push anyone's cold create back.
    const rate = chosen.createRatePerS === undefined ? {} : { ratePerS: chosen.createRatePerS };
    const slot = await supply.limiter.take(chosen.id, { ...rate, horizonMs: 0 });
    if (!slot.booked) {
      await supply.leases.release(ticket, owner);
      return 'refused';
    }
    this.#inflight += 1;
    const fill = (async () => {
      try {
        const sandbox = await supply.createInSlot(
          { ticket, owner, target: chosen, spec },
          {
            sandbox: record.sandbox,
            tools: record.tools,
            role: 'warm',
            runId: '',
            jobId: '',
            deadline: Date.now() + this.#o.idleMs,
            logger,
            onLost: () => this.#claimed(ticket),
          },
          { logger, giveUpAt: Date.now() + 60 * SECOND, preBooked: true },
        );
        // Known before it is offered: a claim right after the offer must find it here to hand it over.
        this.#offered.set(ticket, { sandbox, owner, spec, readyAt: performance.now() });
        if (this.#stopping || !(await supply.leases.offer(ticket, owner, spec))) {
          this.#offered.delete(ticket);
          await sandbox.release();
          return;
        }
        this.#o.metrics?.warm.inc({ event: 'filled' });
      } catch (err) {
        logger.warn({ err: coerceError(err), spec }, 'a warm sandbox could not be made');
      } finally {
        this.#inflight -= 1;
      }
    })();
    this.#fills.add(fill);
    void fill.finally(() => this.#fills.delete(fill));
    return 'started';
  }

  /** Someone claimed it (its lease has another holder now): stop holding it, do not kill it. */
  #claimed(ticket: string): void {
    const offered = this.#offered.get(ticket);
    if (!offered) return;
    this.#offered.delete(ticket);
    offered.sandbox.handOver();
  }

  /** Takes an unclaimed warm sandbox out of the pool and kills it; false when it was claimed meanwhile. */
  async #takeBack(ticket: string, event: 'expired'): Promise<boolean> {
    const offered = this.#offered.get(ticket);
    if (!offered) return false;
    const withdrawn = await this.#o.supply.leases.withdraw(ticket, offered.owner);
    this.#offered.delete(ticket);
    if (!withdrawn) {
      offered.sandbox.handOver();
      return false;
    }
    this.#o.metrics?.warm.inc({ event });
    await offered.sandbox.release();
    return true;
  }
}
