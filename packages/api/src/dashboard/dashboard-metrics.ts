/**
 * The dashboard's `/metrics`: one Prometheus scrape target for the whole fleet. It merges
 * - the fleet aggregate: every live worker's published snapshot, summed (see the worker's metrics/metrics-publisher.ts);
 * - gauges read from Redis at scrape time: BullMQ job counts by state, the fleet's sandbox slots (live,
 *   starting, warm, waiting; from the slot script, on Redis's clock), known runs and how many workers report;
 * - the replay fidelity of the newest runs (folded from their results streams, see store/run-fidelity.ts).
 */
import type { Queue } from 'bullmq';
import { FIRST_DIVERGENCE_BUCKETS, getRunFidelity, type Keyspace, type RedisClient } from '@rollout-fleet/shared';
import { Gauge, Registry } from 'prom-client';
import { LeaseStore } from '@rollout-fleet/sandbox';
import { aggregateFleetMetrics } from '@rollout-fleet/worker';

/** Runs whose fidelity /metrics reports: the newest ones (labels per run stay few). */
const FIDELITY_RUNS = 50;

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
    help: "The fleet's sandbox slots by state: live (all held, incl. starting and warm), starting, warm_ready, warm_starting; and acquirers waiting for a slot",
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
  const workers = new Gauge({
    name: 'rf_workers_reporting',
    help: 'Worker processes whose metrics snapshot is fresh',
    registers,
  });
  const fidelityEpisodes = new Gauge({
    name: 'rf_run_fidelity_episodes',
    help: 'Replayed episodes of a run (latest result each) by the bucket of their first divergent step; "none" = no divergence',
    labelNames: ['run', 'first_divergence'],
    registers,
  });
  const fidelityClean = new Gauge({
    name: 'rf_run_fidelity_clean_ratio',
    help: "Share of a run's replayed episodes whose every recorded observation matched",
    labelNames: ['run'],
    registers,
  });
  const fidelitySteps = new Gauge({
    name: 'rf_run_fidelity_step_ratio',
    help: 'Matched / compared replayed steps of a run',
    labelNames: ['run'],
    registers,
  });

  /** The newest runs' fidelity (folding their new results first); runs that replayed nothing are left out. */
  const collectRunFidelity = async (): Promise<void> => {
    const ids = await redis.smembers(keys.runs());
    const created = await Promise.all(ids.map((id) => redis.hget(keys.run(id), 'created_at')));
    const newest = ids
      .map((id, i) => ({ id, createdAt: created[i] ?? '' }))
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, FIDELITY_RUNS);
    const figures = await Promise.all(newest.map(({ id }) => getRunFidelity(redis, keys, id)));
    fidelityEpisodes.reset();
    fidelityClean.reset();
    fidelitySteps.reset();
    newest.forEach(({ id }, i) => {
      const figure = figures[i];
      if (figure === undefined || figure.replayed === 0) return;
      for (const bucket of FIRST_DIVERGENCE_BUCKETS)
        fidelityEpisodes.set({ run: id, first_divergence: bucket }, figure.firstDivergence[bucket]);
      if (figure.cleanShare !== null) fidelityClean.set({ run: id }, figure.cleanShare);
      if (figure.stepRatio !== null) fidelitySteps.set({ run: id }, figure.stepRatio);
    });
  };

  return {
    contentType: local.contentType,
    async render() {
      const fleet = await aggregateFleetMetrics(redis, keys, { staleAfterMs });
      // Stale snapshots were just deleted, so what remains is the live worker count.
      workers.set(await redis.hlen(keys.metrics()));
      await collectRunFidelity();
      return Registry.merge([fleet, local]).metrics();
    },
  };
}
