/**
 * Fleet-wide sandbox reaper. One pass at a time across all workers (a Redis lock with a TTL); each pass:
 * 1. kills the sandboxes whose lease expired (their holder died or hung): the slot script moved them to the
 *    doomed set when Redis let the lease key expire — liveness is Redis's verdict, never a clock comparison;
 * 2. lists the platform's sandboxes carrying this fleet's label (a random fleet id, so two deployments sharing
 *    a function never touch each other's) and kills those no live lease owns — neither by sandbox id, nor as
 *    the create call in flight that made it (its `rf-env` label) — once they have been seen unowned for the
 *    grace period (on Redis's clock). A holder whose lease lapsed learns it on its next renewal (which cannot
 *    bring the lease back) and stops, so the reaper never kills work whose owner still holds it.
 * The platform lifetime (CreateSandbox Timeout) stays the last backstop.
 */
import { randomUUID } from 'node:crypto';
import { AGENT_ENV_LABEL_KEY, type VefaasTarget } from '../agent-env/agent-env.js';
import { coerceError, releaseLock, type Keyspace, type Logger, type RedisClient } from '@rollout-fleet/shared';
import { FLEET_LABEL_KEY } from './fleet-id.js';
import type { LeaseStore, ListedSandbox } from './lease-store.js';

/** The narrow slice of one target's control plane the reaper needs. */
export interface ReaperPlatform {
  /** The sandbox target's id (as leases record it). */
  id: string;
  kill(sandboxId: string): Promise<void>;
  /** Sandboxes carrying this fleet's label, with their `rf-env` label ('' when none). */
  listFleet(): Promise<Array<{ sandboxId: string; status: string; label: string }>>;
}

export interface ReaperOptions {
  redis: RedisClient;
  keys: Keyspace;
  leases: LeaseStore;
  platforms: readonly ReaperPlatform[];
  logger: Logger;
  /** How long a listed sandbox must have been seen unowned before it is killed. @defaultValue the lease TTL */
  graceMs?: number;
  /**
   * The same for a sandbox with the fleet label but no slot label (not made by this supply's protocol, e.g.
   * an older version that wrote the lease after the create returned): a whole create may pass before its
   * owner records it. @defaultValue the create timeout + the lease TTL
   */
  unlabelledGraceMs?: number;
  /** Used for the unlabelled grace default. @defaultValue 180 s */
  createTimeoutMs?: number;
  /** How long one pass may hold the fleet-wide lock. @defaultValue 60 s */
  lockTtlMs?: number;
  onKill?: (reason: 'lease-expired' | 'orphan') => void;
}

export interface ReapReport {
  ran: boolean;
  /** Sandboxes killed because their lease expired. */
  expired: string[];
  /** Listed sandboxes of the fleet killed because nothing owned them. */
  orphans: string[];
}

export function reaperPlatformFor(target: VefaasTarget, fleetId: string, id = 'default'): ReaperPlatform {
  return {
    id,
    kill: async (sandboxId) => {
      await target.vefaas.killSandbox({ FunctionId: target.functionId, SandboxId: sandboxId });
    },
    listFleet: async () => {
      const items = await target.vefaas.listAllSandboxes({
        FunctionId: target.functionId,
        Metadata: { [FLEET_LABEL_KEY]: fleetId },
      });
      return items.map((item) => ({
        sandboxId: item.Id,
        status: item.Status ?? '',
        label: item.Metadata?.[AGENT_ENV_LABEL_KEY] ?? '',
      }));
    },
  };
}

export class Reaper {
  readonly #o: ReaperOptions & { graceMs: number; unlabelledGraceMs: number; lockTtlMs: number };

  constructor(options: ReaperOptions) {
    const ttl = options.leases.ttlMs;
    this.#o = {
      graceMs: ttl,
      unlabelledGraceMs: (options.createTimeoutMs ?? 180_000) + ttl,
      lockTtlMs: 60_000,
      ...options,
    };
  }

  /** One pass; `ran: false` when another process holds the lock. */
  async reapOnce(): Promise<ReapReport> {
    const { redis, keys, leases, logger } = this.#o;
    const token = randomUUID();
    const locked = await redis.set(keys.reaperLock(), token, 'PX', this.#o.lockTtlMs, 'NX');
    if (locked !== 'OK') return { ran: false, expired: [], orphans: [] };
    const report: ReapReport = { ran: true, expired: [], orphans: [] };
    try {
      // Purges expired leases (their sandboxes become doomed) before reading the doomed set.
      await leases.counts();
      for (;;) {
        const doomed = await leases.takeDoomed();
        for (const { target, sandboxId } of doomed) {
          const platform = this.#platform(target);
          if (!platform) continue;
          const outcome = await this.#kill(platform, sandboxId, 'lease-expired');
          if (outcome === 'killed') report.expired.push(sandboxId);
          if (outcome === 'failed') await leases.doom(target, sandboxId);
        }
        if (doomed.length < 100) break;
      }
      await this.#orphans(report);
    } finally {
      // Release only our own lock (compare-and-delete).
      await releaseLock(redis, keys.reaperLock(), token);
    }
    if (report.expired.length + report.orphans.length > 0) logger.info(report, 'reaper killed sandboxes');
    return report;
  }

  async #orphans(report: ReapReport): Promise<void> {
    const listed: ListedSandbox[] = [];
    const where = new Map<string, ReaperPlatform>();
    for (const platform of this.#o.platforms) {
      let items: Awaited<ReturnType<ReaperPlatform['listFleet']>>;
      try {
        items = await platform.listFleet();
      } catch (err) {
        this.#o.logger.warn({ err, target: platform.id }, 'reaper could not list sandboxes');
        continue;
      }
      for (const item of items) {
        if (item.status === 'Terminating') continue;
        listed.push({ sandboxId: item.sandboxId, ticket: ticketOf(item.label), label: item.label });
        where.set(item.sandboxId, platform);
      }
    }
    const kill = await this.#o.leases.orphans(listed, {
      graceMs: this.#o.graceMs,
      unlabelledGraceMs: this.#o.unlabelledGraceMs,
    });
    for (const sandboxId of kill) {
      const platform = where.get(sandboxId);
      if (platform && (await this.#kill(platform, sandboxId, 'orphan')) === 'killed') report.orphans.push(sandboxId);
    }
  }

  #platform(id: string): ReaperPlatform | undefined {
    const platform = this.#o.platforms.find((p) => p.id === id);
    if (!platform)
      this.#o.logger.warn({ target: id }, 'a doomed sandbox of an unknown target; left to its platform lifetime');
    return platform;
  }

  async #kill(
    platform: ReaperPlatform,
    sandboxId: string,
    reason: 'lease-expired' | 'orphan',
  ): Promise<'killed' | 'gone' | 'failed'> {
    try {
      await platform.kill(sandboxId);
      this.#o.onKill?.(reason);
      return 'killed';
    } catch (thrown) {
      const err = coerceError(thrown);
      if (err.code === 'VEFAAS_NOT_FOUND') return 'gone';
      this.#o.logger.warn({ err, sandboxId, reason }, 'reaper could not kill sandbox');
      return 'failed';
    }
  }
}

/** `rf-env` labels are `<ticket>.<create call>`; anything else carries no ticket. */
function ticketOf(label: string): string {
  const match = /^([0-9a-f-]{36})\.\d+$/.exec(label);
  return match?.[1] ?? '';
}
