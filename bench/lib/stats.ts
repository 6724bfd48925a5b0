/** Small helpers every benchmark prints with: quantiles, means, machine load. */
import { cpus, loadavg } from 'node:os';

/** Nearest-rank quantile (q in 0..1) of unsorted samples; NaN when empty. */
export function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? NaN : samples.reduce((sum, x) => sum + x, 0) / samples.length;
}

export const ms = (value: number, digits = 1): string => `${value.toFixed(digits)} ms`;

/** "load 1.23 0.84 0.79 on 2 cores": other work on the machine skews every figure, so each run says how busy it was. */
export function machineLoad(): string {
  return `load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} on ${cpus().length} cores`;
}
