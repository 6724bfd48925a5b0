/**
 * The fleet-wide ledger of clean sandbox losses (docs/adversarial-grading.md, "Never 0 for infra"): a sandbox
 * lost before any model command ran cannot be the model's doing, so many of them across episodes within a short
 * window are the platform's outage — and a sandbox lost after model commands in that window is then infra too
 * (null, never 0). One Lua script per operation, Redis's clock for every time, so workers' clocks do not matter.
 *
 * Wire contract: KEYS[1] = keys.sandboxLosses() (the fleet's hash tag); record-clean-loss.lua and
 * count-clean-losses.lua describe their arguments and answers.
 */
import { LuaScript, type Keyspace, type RedisClient } from '@rollout-fleet/shared';

const RECORD = LuaScript.load(new URL('./record-clean-loss.lua', import.meta.url));
const COUNT = LuaScript.load(new URL('./count-clean-losses.lua', import.meta.url));
const SECOND = 1000;
/** History kept beyond the window: the earliest attempt of a job whose retries back off for minutes. */
const KEEP_MS = 60 * 60 * SECOND;

export interface OutageRule {
  /** RF_OUTAGE_WINDOW_S. */
  windowS: number;
  /** RF_OUTAGE_CLEAN_LOSSES. */
  cleanLosses: number;
}

export interface LossLedger {
  /** Records a clean loss of `label`'s sandbox now; answers the clean losses (distinct episodes) in the window. */
  recordClean(label: string): Promise<{ count: number; atMs: number }>;
  /** Whether the fleet was in an outage within the window around `atMs` (Redis ms; 0 = now), `label` not counted. */
  outageAround(atMs: number, label: string): Promise<boolean>;
}

export function createLossLedger(redis: RedisClient, keys: Keyspace, rule: OutageRule): LossLedger {
  const key = keys.sandboxLosses();
  const windowMs = rule.windowS * SECOND;
  return {
    async recordClean(label) {
      const [count, now] = (await RECORD.run(redis, [key], [label, windowMs, Math.max(KEEP_MS, 2 * windowMs)])) as [
        number,
        number,
      ];
      return { count, atMs: now };
    },
    async outageAround(atMs, label) {
      const [count] = (await COUNT.run(redis, [key], [Math.max(0, Math.round(atMs)), windowMs, label])) as [
        number,
        number,
      ];
      return count >= rule.cleanLosses;
    },
  };
}
