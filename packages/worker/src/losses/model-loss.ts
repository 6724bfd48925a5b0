/**
 * At a job's last attempt, whether its lost sandboxes are the model's (docs/adversarial-grading.md, "Never 0 for
 * infra"): the evidence is the attempt records (loss-rule.ts) and, for each loss after model commands, the
 * fleet-wide ledger around its time (loss-ledger.ts). The model's → the verdict to commit (graded, reward for
 * unresolved); otherwise undefined and the job fails as infra (null).
 */
import type { Attempt, EvalSpec } from '@rollout-fleet/shared';
import { lostAfterModel, lostInStep, stepThatKillsItsSandbox, type Rewards, type Verdict } from '../grading/verdict.js';
import type { LossLedger } from './loss-ledger.js';
import { lossesAreTheModels, lostAfterModel as lossAfterModel } from './loss-rule.js';

export async function modelLossVerdict(o: {
  attempts: readonly Attempt[];
  /** Attempts this job made (its own, not a carried history before a re-run). */
  n: number;
  spec: EvalSpec | undefined;
  rewards: Rewards;
  ledger: LossLedger | undefined;
  /** The episode (run|episode|sample): its own clean losses are not evidence of an outage. */
  label: string;
}): Promise<Verdict | undefined> {
  const { attempts, n } = o;
  const from = attempts.length - n;
  const outage = await Promise.all(
    attempts.map(async (a, i) => {
      if (i < from || !lossAfterModel(a) || o.ledger === undefined) return false;
      const at = Date.parse(a.ended_at);
      return o.ledger.outageAround(Number.isNaN(at) ? 0 : at, o.label);
    }),
  );
  if (!lossesAreTheModels(attempts, n, outage)) return undefined;
  const step = stepThatKillsItsSandbox(attempts, n);
  if (step !== undefined) return lostInStep(o.spec, step, o.rewards);
  const where = [...new Set(attempts.slice(from).map((a) => a.lost_in ?? 'step'))].join(', ');
  return lostAfterModel(o.spec, where, o.rewards);
}
