/** The supply's limits from the product configuration (one place that maps config → SupplyLimits). */
import type { Config } from '@rollout-fleet/shared';
import type { SupplyLimits } from './sandbox-supply.js';

const SECOND = 1000;

export function supplyLimitsFrom(config: Config): SupplyLimits {
  const { supply } = config;
  return {
    createRatePerS: supply.createRate,
    createBurst: supply.createBurst,
    createRecoverS: supply.createRecoverS,
    maxSandboxes: supply.maxSandboxes,
    maxStarting: supply.maxStarting,
    acquireTimeoutMs: supply.acquireTimeoutS * SECOND,
    createTimeoutMs: config.vefaas.createTimeoutMs,
    leaseTtlMs: config.worker.leaseTtlS * SECOND,
  };
}
