/**
 * The dashboard's `/metrics`: one Prometheus scrape target for the whole fleet. It merges
 * - the fleet aggregate: every live worker's published snapshot, summed (see ../metrics/metrics-publisher.ts);
 * - gauges read from Redis at scrape time: BullMQ job counts by state, the fleet's sandbox slots (live,
 *   starting, warm, waiting; from the slot script, on Redis's clock), known runs and how many workers report.
 */
import type { Queue } from 'bullmq';
import type { Keyspace, RedisClient } from '@rollout-fleet/shared';
import { Gauge, Registry } from 'prom-client';
import { LeaseStore } from '../leases/lease-store.js';
import { aggregateFleetMetrics } from '../metrics/metrics-publisher.js';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

export interface DashboardMetricsOptions {
  redis: RedisClient;
  keys: Keyspace;
  queues: readonly Queue[];
  /** Worker snapshots older than this are dropped (a worker that died without unpublishing). @defaultValue 30 s */
  staleAfterMs?: number;
}

export interface DashboardMetrics {
  readonly contentType: string;
  /** The Prometheus text of one scrape. */
  render(): Promise<string>;
}

export function createDashboardMetrics(options: DashboardMetricsOptions): DashboardMetrics {
  const { redis, keys, queues } = options;
  const staleAfterMs = options.staleAfterMs ?? 30 * 1000;
  const local = new Registry();
  const registers = [local];

  new Gauge({
    name: 'rf_queue_jobs',
    help: 'BullMQ jobs (episodes) by queue and state, read at scrape time',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      const counts = await Promise.all(queues.map((q) => q.getJobCounts(...JOB_STATES)));
      this.reset();
      queues.forEach((q, i) => {
        for (const state of JOB_STATES) this.set({ queue: q.name, state }, counts[i]?.[state] ?? 0);
      });
    },
  });
  // The TTL only matters for writes; counting reads (and purges expired leases, as any slot operation does).
  const slots = new LeaseStore(redis, keys, { ttlMs: 60_000 });
  new Gauge({
    name: 'rf_fleet_sandboxes',
    help: 'The fleet\'s sandbox slots by state: live (all held, incl. starting and warm), starting, warm_ready, warm_starting; and acquirers waiting for a slot',
    labelNames: ['state'],
    registers,
    async collect() {
      const counts = await slots.counts();
      this.reset();
      this.set({ state: 'live' }, counts.live);
      this.set({ state: 'starting' }, counts.starting);
      this.set({ state: 'warm_ready' }, counts.ready);
      this.set({ state: 'warm_starting' }, counts.warming);
      this.set({ state: 'waiting' }, counts.waiters);
    },
  });
  new Gauge({
    name: 'rf_runs_known',
    help: 'Runs ever submitted and still recorded',
    registers,
    async collect() {
      this.set(await redis.scard(keys.runs()));
    },
  });
  const workers = new Gauge({ name: 'rf_workers_reporting', help: 'Worker processes whose metrics snapshot is fresh', registers });

  return {
    contentType: local.contentType,
    async render() {
      const fleet = await aggregateFleetMetrics(redis, keys, { staleAfterMs });
      // Stale snapshots were just deleted, so what remains is the live worker count.
      workers.set(await redis.hlen(keys.metrics()));
      return Registry.merge([fleet, local]).metrics();
    },
  };
}
