/**
 * Whose is a lost sandbox (docs/adversarial-grading.md, "Never 0 for infra"), both directions:
 * - the model's (graded, reward for unresolved): the agent's sandbox or its session was lost after the model's
 *   commands ran, in every attempt — at any step, while the shell settled, or while the patch was taken;
 * - infra (retried, null if it persists): a loss before any model command ran, a loss the platform gave its own
 *   cause for (the gateway answering 502/503), or any loss during a fleet-wide outage (the loss ledger).
 * Pure: the processor gathers the evidence (attempt records, the ledger's answer) and asks here.
 */
import type { Attempt, RolloutError } from '@rollout-fleet/shared';
import { SANDBOX_LOSS } from '../grading/verdict.js';

/** Where in the attempt the agent's sandbox was lost. */
export type LossPhase = NonNullable<Attempt['lost_in']>;

/** A lost sandbox, or a session that vanished under a model command (someone closed it with the server's token). */
export function isSandboxLoss(err: RolloutError): boolean {
  return SANDBOX_LOSS.has(err.code) || err.code === 'SWEREX_SESSION_MISSING';
}

/** The gateway answers that are the platform's own report of trouble (not a timeout the model can cause). */
const PLATFORM_STATUSES = new Set([502, 503]);

/** What the attempt record says about a loss; undefined when `err` is not a loss of the agent's sandbox. */
export function lossRecordOf(
  err: RolloutError,
  o: { phase: LossPhase | 'grade'; stepsRun: number },
): Pick<Attempt, 'lost_after_model' | 'lost_in' | 'platform_cause'> | undefined {
  if (o.phase === 'grade' || !isSandboxLoss(err)) return undefined;
  // A loss during step i: step i, a model command, was sent. Elsewhere: whether any step ran before.
  const afterModel = typeof err.details.lostAtStep === 'number' || o.stepsRun > 0;
  const status = typeof err.details.status === 'number' ? err.details.status : undefined;
  const platform =
    err.code === 'GATEWAY_ERROR' && status !== undefined && PLATFORM_STATUSES.has(status)
      ? `the gateway answered ${status}`
      : undefined;
  return {
    lost_after_model: o.phase !== 'setup' && afterModel,
    lost_in: o.phase,
    ...(platform === undefined ? {} : { platform_cause: platform }),
  };
}

/**
 * Whether the job's last `n` (≥ 2) attempts all lost their sandbox after model commands, none with a platform
 * cause and none during an outage (`inOutage`): then the losses are the model's. Once could be the platform.
 */
export function lossesAreTheModels(attempts: readonly Attempt[], n: number, inOutage: readonly boolean[]): boolean {
  if (n < 2 || attempts.length < n) return false;
  const last = attempts.slice(-n);
  return last.every(
    (a, i) => lostAfterModel(a) && a.platform_cause === undefined && inOutage[attempts.length - n + i] !== true,
  );
}

/** A loss after model commands; records written before `lost_after_model` existed say so by `lost_at_step`. */
export function lostAfterModel(a: Attempt): boolean {
  return a.lost_after_model ?? a.lost_at_step !== undefined;
}
