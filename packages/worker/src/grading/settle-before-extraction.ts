/**
 * Before the patch is taken from the agent's sandbox, its shell must have run every command the steps sent: a
 * session left a prompt behind (SWE-ReX's 1 s exit-code fetch missed on a loaded sandbox, or a model printing
 * prompts) answers a step before running it, and the patch would miss that step (AgentEnv.settle). A shell that
 * never catches up while the sandbox answers is the model's doing: the patch is taken as the tree stands and
 * graded, with SESSION_OUT_OF_SYNC (model) on the result — never a retry (a null a policy could ask for by
 * desyncing its own shell) and never a grade of commands that had not run.
 */
import { RolloutError, toFailure, type Failure, type Logger } from '@rollout-fleet/shared';
import { type SettleOutcome } from '@rollout-fleet/sandbox';

export interface SettlingShell {
  settle(options: { timeoutS: number; rounds?: number }): Promise<SettleOutcome>;
}

/** Longest wait for one marker: the model's own step timeout, at most this (a stall is seconds, not minutes). */
const SETTLE_ROUND_MAX_S = 60;

export async function settleBeforeExtraction(
  shell: SettlingShell,
  o: { stepTimeoutS: number; logger: Logger },
): Promise<Failure | null> {
  const outcome = await shell.settle({ timeoutS: Math.min(o.stepTimeoutS, SETTLE_ROUND_MAX_S) });
  if (outcome === 'caught-up')
    o.logger.warn('the shell was out of step after the last step; it caught up before the patch was taken');
  if (outcome !== 'out-of-sync') return null;
  o.logger.warn('the shell never caught up with the steps; the patch is taken as the tree stands');
  return toFailure(
    new RolloutError(
      'SESSION_OUT_OF_SYNC',
      'the shell never printed the end-of-episode marker (prompts printed out of turn, or a command still running); the patch was taken as the tree stood',
    ),
  );
}
