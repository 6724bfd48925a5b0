/**
 * Fleet-wide sandbox reaper. One at a time across all workers (a Redis lock with a TTL); each pass:
 * 1. kills sandboxes whose lease expired (their worker died or hung),
 * 2. kills sandboxes the platform lists with our fleet label but no lease — leaked between
 *    CreateSandbox and the lease write, or by a crash — once they are older than a grace period
 *    (so a sandbox whose lease is being written right now is not taken).
 * The platform lifetime (CreateSandbox Timeout) stays the last backstop.
 */
import { randomUUID } from 'node:crypto';
import { coerceError, type Keyspace, type Logger, type RedisClient } from '@rollout-fleet/shared';
import type { LeaseStore } from './lease-store.js';

/** The narrow slice of the veFaaS control plane the reaper needs. */
export interface ReaperPlatform {
  kill(sandboxId: string): Promise<void>;
  /** Sandboxes carrying this fleet's label. */
  listFleet(): Promise<Array<{ sandboxId: string; createdAt: Date; status: string }>>;
}

export interface ReaperOptions {
  redis: RedisClient;
  keys: Keyspace;
  leases: LeaseStore;
  platform: ReaperPlatform;
  logger: Logger;
  /** Unleased sandboxes younger than this are left alone. @defaultValue 2 × lease TTL */
  graceMs?: number;
  /** How long one pass may hold the fleet-wide lock. @defaultValue 60 s */
  lockTtlMs?: number;
  now?: () => number;
  onKill?: (reason: 'lease-expired' | 'orphan') => void;
}

export interface ReapReport {
  ran: boolean;
  expired: string[];
  orphans: string[];
}

export class Reaper {
  readonly #o: Required<Omit<ReaperOptions, 'onKill'>> & Pick<ReaperOptions, 'onKill'>;

  constructor(options: ReaperOptions) {
    this.#o = {
      graceMs: 2 * options.leases.ttlMs,
      lockTtlMs: 60_000,
      now: Date.now,
      ...options,
    };
  }

  /** One pass; `ran: false` when another process holds the lock. */
  async reapOnce(): Promise<ReapReport> {
    const { redis, keys, leases, platform, logger } = this.#o;
    const token = randomUUID();
    const locked = await redis.set(keys.reaperLock(), token, 'PX', this.#o.lockTtlMs, 'NX');
    if (locked !== 'OK') return { ran: false, expired: [], orphans: [] };
    const report: ReapReport = { ran: true, expired: [], orphans: [] };
    try {
      for (const sandboxId of await leases.expired()) {
        // A lease renewed since the range query is live again.
        const lease = await leases.get(sandboxId);
        if (lease && lease.expiresAt > this.#o.now()) continue;
        if (await this.#kill(sandboxId, 'lease-expired')) report.expired.push(sandboxId);
        await leases.release(sandboxId);
      }
      const listed = await platform.listFleet();
      const live = listed.filter((s) => s.status !== 'Terminating');
      const leased = await leases.leased(live.map((s) => s.sandboxId));
      for (const sandbox of live) {
        if (leased.has(sandbox.sandboxId)) continue;
        if (this.#o.now() - sandbox.createdAt.getTime() < this.#o.graceMs) continue;
        if (await this.#kill(sandbox.sandboxId, 'orphan')) report.orphans.push(sandbox.sandboxId);
      }
    } finally {
      // Release only our own lock (compare-and-delete).
      await redis.eval(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0",
        1,
        keys.reaperLock(),
        token,
      );
    }
    if (report.expired.length + report.orphans.length > 0) logger.info(report, 'reaper killed sandboxes');
    return report;
  }

  async #kill(sandboxId: string, reason: 'lease-expired' | 'orphan'): Promise<boolean> {
    try {
      await this.#o.platform.kill(sandboxId);
      this.#o.onKill?.(reason);
      return true;
    } catch (thrown) {
      const err = coerceError(thrown);
      if (err.code === 'VEFAAS_NOT_FOUND') return false;
      this.#o.logger.warn({ err, sandboxId, reason }, 'reaper could not kill sandbox');
      return false;
    }
  }
}
