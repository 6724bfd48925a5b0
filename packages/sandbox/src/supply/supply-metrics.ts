/** Prometheus metrics of the sandbox supply (per process; the dashboard sums them over the fleet). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type CreateOutcome = 'ok' | 'throttled' | 'timeout' | 'error';
export type WarmEvent = 'hit' | 'discarded' | 'filled' | 'expired' | 'evicted';
export type WaitReason = 'slot' | 'rate';

export interface SupplyMetrics {
  /** CreateSandbox calls by outcome (a 429 is `throttled`; it never costs an episode attempt). */
  readonly creates: Counter<'outcome'>;
  /** Sandboxes found by label after a failed or timed-out create: adopted, or killed as extras. */
  readonly createRecovered: Counter<'action'>;
  /** From asking to holding a ready sandbox (waits included), by where it came from. */
  readonly acquireSeconds: Histogram<'source'>;
  /** Time spent waiting for a slot (caps) or a create slot (rate). */
  readonly waitSeconds: Counter<'reason'>;
  readonly warm: Counter<'event'>;
  /** Create slots given up because this process woke too late to use them (a stalled event loop). */
  readonly createSlotsMissed: Counter;
  /**
   * How long after its booked create slot each CreateSandbox went out. Creates booked apart but sent late go
   * out together: the fleet's burst (RF_FLEET_CREATE_BURST) must stay below the platform's by this × the rate.
   */
  readonly createLateSeconds: Histogram;
  /** The fleet's create rate as this process last saw it (AIMD lowers it after 429s). */
  readonly createRate: Gauge<'target'>;
}

export function createSupplyMetrics(registry: Registry): SupplyMetrics {
  const registers = [registry];
  return {
    creates: new Counter({
      name: 'rf_sandbox_creates_total',
      help: 'CreateSandbox calls by outcome',
      labelNames: ['outcome'],
      registers,
    }),
    createRecovered: new Counter({
      name: 'rf_sandbox_create_recovered_total',
      help: 'Sandboxes found by label after a failed create: adopted, or killed as extras',
      labelNames: ['action'],
      registers,
    }),
    acquireSeconds: new Histogram({
      name: 'rf_sandbox_acquire_seconds',
      help: 'From asking the supply to holding a ready sandbox, waits included, by source (warm pool or cold create)',
      labelNames: ['source'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
      registers,
    }),
    waitSeconds: new Counter({
      name: 'rf_sandbox_wait_seconds_total',
      help: 'Seconds acquirers waited, for a slot (caps) or for the create rate',
      labelNames: ['reason'],
      registers,
    }),
    createSlotsMissed: new Counter({
      name: 'rf_sandbox_create_slots_missed_total',
      help: 'Create slots given up because the process woke too late to use them (stalled event loop); booked again',
      registers,
    }),
    createLateSeconds: new Histogram({
      name: 'rf_sandbox_create_late_seconds',
      help: 'How long after its booked create slot each CreateSandbox went out (the burst must leave room for this)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    }),
    warm: new Counter({
      name: 'rf_warm_pool_total',
      help: 'Warm pool events: hit, discarded (dead on claim), filled, expired (idle), evicted',
      labelNames: ['event'],
      registers,
    }),
    createRate: new Gauge({
      name: 'rf_fleet_create_rate',
      help: 'Fleet-wide CreateSandbox rate (creates/s) last seen, by target',
      labelNames: ['target'],
      registers,
    }),
  };
}
