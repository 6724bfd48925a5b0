/**
 * The reaper as a process of the fleet runs it (every worker, and the API): one Reaper over the process's sandbox
 * targets, a pass every RF_REAPER_INTERVAL_S (never overlapping itself; one pass at a time fleet-wide by its lock).
 */
import type { Config, Keyspace, Logger, RedisClient } from '@rollout-fleet/shared';
import type { VefaasTarget } from '../agent-env/agent-env.js';
import { repeatEvery as every } from '@rollout-fleet/shared';
import type { LeaseStore } from './lease-store.js';
import { Reaper, reaperPlatformFor, type ReaperOptions } from './reaper.js';

const SECOND_MS = 1000;

export interface ProcessReaperOptions {
  /** worker.reaperIntervalS and vefaas.createTimeoutMs are used. */
  config: Config;
  redis: RedisClient;
  keys: Keyspace;
  /** The process's sandbox supply's leases and fleet id. */
  leases: LeaseStore;
  fleetId: string;
  targets: ReadonlyArray<{ id: string; target: VefaasTarget }>;
  logger: Logger;
  onKill?: ReaperOptions['onKill'];
}

export interface ProcessReaper {
  readonly reaper: Reaper;
  /** Starts the passes; returns the stopper. */
  start(): () => void;
}

export function createProcessReaper(options: ProcessReaperOptions): ProcessReaper {
  const { config, logger, fleetId } = options;
  const intervalMs = config.worker.reaperIntervalS * SECOND_MS;
  const reaper = new Reaper({
    redis: options.redis,
    keys: options.keys,
    leases: options.leases,
    platforms: options.targets.map((t) => reaperPlatformFor(t.target, fleetId, t.id)),
    createTimeoutMs: config.vefaas.createTimeoutMs,
    logger,
    // A process killed mid-pass leaves the fleet-wide lock behind: it must expire within a few intervals,
    // or reaping stops for a minute when intervals are short.
    lockTtlMs: Math.min(60 * SECOND_MS, Math.max(5 * SECOND_MS, 3 * intervalMs)),
    ...(options.onKill ? { onKill: options.onKill } : {}),
  });
  return { reaper, start: () => every(intervalMs, () => reaper.reapOnce(), logger, 'reaper pass failed') };
}
