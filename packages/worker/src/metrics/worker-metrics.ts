/**
 * Per-process Prometheus metrics of a worker. Many worker processes on many hosts report through Redis
 * (see metrics-publisher.ts); the dashboard's /metrics aggregates them, so Prometheus scrapes one target.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { WARM_POOL_MAX_METRIC, type EpisodeResult } from '@rollout-fleet/shared';
import { createSupplyMetrics, type SupplyMetrics } from '@rollout-fleet/sandbox';
import { createStepMetrics, type StepMetrics } from './step-metrics.js';

export interface WorkerMetrics {
  readonly registry: Registry;
  readonly episodes: Counter<'outcome'>;
  /** Episodes that ended failed, by the failure's code and class (both bounded: the error table). */
  readonly failures: Counter<'code' | 'class'>;
  readonly steps: Counter<'tool'>;
  readonly stepSeconds: Histogram<'tool'>;
  readonly fidelitySteps: Counter<'verdict'>;
  /** `steps`, `stepSeconds` and `fidelitySteps` with their label sets bound (what the step loop calls). */
  readonly perStep: StepMetrics;
  readonly episodeSeconds: Histogram<'outcome'>;
  readonly sandboxCreateSeconds: Histogram;
  readonly liveSandboxes: Gauge;
  /** This worker's RF_WARM_POOL_MAX: producers read it from the snapshot to tell whether an announcement can help. */
  readonly warmPoolMax: Gauge;
  readonly retries: Counter<'code'>;
  readonly reaperKills: Counter<'reason'>;
  readonly duplicateResults: Counter;
  readonly supply: SupplyMetrics;
  /** Policy episodes' model requests (turn-request.ts). */
  readonly policy: { slotWaiters: Gauge; inflight: Gauge; failures: Counter<'code'> };
  /** Event-loop delay p99 and RSS of this process, sampled when the metrics are published. */
  readonly process: ProcessHealth;
}

export interface ProcessHealth {
  /** Updates the gauges from the event-loop monitor (and restarts its window) and from process memory. */
  sample(): void;
  stop(): void;
}

export type EpisodeOutcome = 'resolved' | 'unresolved' | 'ungraded' | 'failed';

/** Counts one stored result: its outcome, and for a failed one its failure's code and class. */
export function countFinished(metrics: WorkerMetrics, result: EpisodeResult): void {
  metrics.episodes.inc({ outcome: outcomeOf(result) });
  if (result.status === 'failed' && result.failure !== null)
    metrics.failures.inc({ code: result.failure.code, class: result.failure.class });
}

export function outcomeOf(result: EpisodeResult): EpisodeOutcome {
  if (result.status === 'failed') return 'failed';
  if (result.resolved === null) return 'ungraded';
  return result.resolved ? 'resolved' : 'unresolved';
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  const registers = [registry];
  const metrics = {
    registry,
    episodes: new Counter({
      name: 'rf_episodes_total',
      help: 'Episodes finished, by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    failures: new Counter({
      name: 'rf_episode_failures_total',
      help: 'Episodes that ended failed (no reward), by failure code and class (infra, model, input)',
      labelNames: ['code', 'class'],
      registers,
    }),
    steps: new Counter({
      name: 'rf_steps_total',
      help: 'Trajectory steps replayed, by tool',
      labelNames: ['tool'],
      registers,
    }),
    stepSeconds: new Histogram({
      name: 'rf_step_duration_seconds',
      help: 'Wall time of one replayed step',
      labelNames: ['tool'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    }),
    fidelitySteps: new Counter({
      name: 'rf_fidelity_steps_total',
      help: 'Replayed steps compared with their recorded observation, by verdict (match, differs, no_record)',
      labelNames: ['verdict'],
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
    liveSandboxes: new Gauge({
      name: 'rf_live_sandboxes',
      // Summed over workers by the dashboard: what workers hold, not the fleet's slots (rf_fleet_sandboxes).
      help: 'Sandboxes held by worker processes right now, summed over live workers (API sessions and slots of dead workers not included: see rf_fleet_sandboxes{state="live"})',
      registers,
    }),
    // A fleet-wide bound each filler applies (not a per-worker share): the fleet's view is the largest, not the sum.
    warmPoolMax: new Gauge({
      name: WARM_POOL_MAX_METRIC,
      help: 'RF_WARM_POOL_MAX of the workers: warm sandboxes the fleet keeps ahead of demand (0 = no warm pool)',
      registers,
      aggregator: 'max',
    }),
    retries: new Counter({
      name: 'rf_retries_total',
      help: 'Attempts that failed and will be retried, by failure code',
      labelNames: ['code'],
      registers,
    }),
    reaperKills: new Counter({
      name: 'rf_reaper_kills_total',
      help: 'Sandboxes killed by the reaper, by reason',
      labelNames: ['reason'],
      registers,
    }),
    duplicateResults: new Counter({
      name: 'rf_duplicate_results_total',
      help: 'Second completions of a job dropped by the exactly-once commit',
      registers,
    }),
    supply: createSupplyMetrics(registry),
    policy: {
      slotWaiters: new Gauge({
        name: 'rf_policy_slot_waiters',
        help: 'Policy turns waiting for a fleet-wide inflight slot of their endpoint (RF_POLICY_MAX_INFLIGHT)',
        registers,
      }),
      inflight: new Gauge({
        name: 'rf_policy_requests_inflight',
        help: 'Chat-completion requests in flight to policy endpoints',
        registers,
      }),
      failures: new Counter({
        name: 'rf_policy_request_failures_total',
        help: 'Failed policy requests (infra ones are retried within the turn), by failure code',
        labelNames: ['code'],
        registers,
      }),
    },
    process: createProcessHealth(registers),
  };
  return { ...metrics, perStep: createStepMetrics(metrics) };
}

/**
 * Event-loop delay of the last window (since the previous sample): a long one means renewals (BullMQ locks,
 * sandbox leases) and heartbeats run late — the first sign of a worker given more than it can carry.
 */
function createProcessHealth(registers: Registry[]): ProcessHealth {
  const monitor = monitorEventLoopDelay({ resolution: 10 });
  monitor.enable();
  // Fleet view: the worst worker's lag, the summed memory.
  const lagP99 = new Gauge({
    name: 'rf_event_loop_lag_p99_seconds',
    help: 'Event-loop delay p99 over the last publish window',
    registers,
    aggregator: 'max',
  });
  const lagMax = new Gauge({
    name: 'rf_event_loop_lag_max_seconds',
    help: 'Event-loop delay maximum over the last publish window',
    registers,
    aggregator: 'max',
  });
  const rss = new Gauge({ name: 'rf_process_rss_bytes', help: 'Resident set size of the worker processes', registers });
  // RSS far above the heap in use is V8 heap slack or native memory, not live objects: the split says which.
  const heap = new Gauge({
    name: 'rf_process_heap_bytes',
    help: 'V8 heap of the worker processes: used, total (committed), external',
    labelNames: ['kind'],
    registers,
  });
  return {
    sample: () => {
      // The monitor reports nanoseconds, and includes its own resolution in every sample.
      lagP99.set(Math.max(0, monitor.percentile(99) / 1e9 - 0.01));
      lagMax.set(Math.max(0, monitor.max / 1e9 - 0.01));
      const memory = process.memoryUsage();
      rss.set(memory.rss);
      heap.set({ kind: 'used' }, memory.heapUsed);
      heap.set({ kind: 'total' }, memory.heapTotal);
      heap.set({ kind: 'external' }, memory.external + memory.arrayBuffers);
      monitor.reset();
    },
    stop: () => monitor.disable(),
  };
}
