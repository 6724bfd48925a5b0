/**
 * Per-process Prometheus metrics of a worker. Many worker processes on many hosts report through Redis
 * (see metrics-publisher.ts); the dashboard's /metrics aggregates them, so Prometheus scrapes one target.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createSupplyMetrics, type SupplyMetrics } from '../supply/supply-metrics.js';

export interface WorkerMetrics {
  readonly registry: Registry;
  readonly episodes: Counter<'outcome'>;
  readonly steps: Counter<'tool'>;
  readonly stepSeconds: Histogram<'tool'>;
  readonly episodeSeconds: Histogram<'outcome'>;
  readonly sandboxCreateSeconds: Histogram;
  readonly liveSandboxes: Gauge;
  readonly retries: Counter<'code'>;
  readonly reaperKills: Counter<'reason'>;
  readonly duplicateResults: Counter;
  readonly supply: SupplyMetrics;
}

export type EpisodeOutcome = 'resolved' | 'unresolved' | 'ungraded' | 'failed';

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    episodes: new Counter({ name: 'rf_episodes_total', help: 'Episodes finished, by outcome', labelNames: ['outcome'], registers }),
    steps: new Counter({ name: 'rf_steps_total', help: 'Trajectory steps replayed, by tool', labelNames: ['tool'], registers }),
    stepSeconds: new Histogram({
      name: 'rf_step_duration_seconds',
      help: 'Wall time of one replayed step',
      labelNames: ['tool'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
    episodeSeconds: new Histogram({
      name: 'rf_episode_duration_seconds',
      help: 'Wall time of one episode attempt, end to end',
      labelNames: ['outcome'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600],
      registers,
    }),
    sandboxCreateSeconds: new Histogram({
      name: 'rf_sandbox_create_seconds',
      help: 'From CreateSandbox to the SWE-ReX server answering /is_alive',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    liveSandboxes: new Gauge({ name: 'rf_live_sandboxes', help: 'Sandboxes this worker holds right now', registers }),
    retries: new Counter({ name: 'rf_retries_total', help: 'Attempts that failed and will be retried, by failure code', labelNames: ['code'], registers }),
    reaperKills: new Counter({ name: 'rf_reaper_kills_total', help: 'Sandboxes killed by the reaper, by reason', labelNames: ['reason'], registers }),
    duplicateResults: new Counter({ name: 'rf_duplicate_results_total', help: 'Second completions of a job dropped by the exactly-once commit', registers }),
    supply: createSupplyMetrics(registry),
  };
}
