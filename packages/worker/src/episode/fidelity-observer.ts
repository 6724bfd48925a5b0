/**
 * Replay fidelity, step by step: after each replayed step (replay's `onStep`), the step's whole output is turned
 * into the observation the recording agent would have stored and compared with the recorded one
 * (@rollout-fleet/shared `compareStep`). The result's `fidelity` is the summary once the replay is done.
 */
import { compareStep, summariseFidelity } from '../fidelity/compare.js';
import { type Fidelity, type FidelityStep, type StepRecord, type ToolCall } from '@rollout-fleet/shared';
import type { AgentSession, RecordedAgent } from './recorded-agent.js';

export interface FidelityObserver {
  /** Compares one replayed step (call after it ran, in order). */
  observe(step: StepRecord, output: string): Promise<FidelityStep>;
  /** The episode's figure over the steps observed so far. */
  result(): Fidelity;
}

export function createFidelityObserver(options: {
  trajectory: readonly ToolCall[];
  agent: RecordedAgent;
  session: AgentSession;
  /** Recorded text and diff of a differing step are kept up to about this many characters. */
  keepChars: number;
  /**
   * The episode's secret masker: the replayed side is masked already (step executor), so the recorded side is
   * masked the same way — a recording that showed the secret still matches, and is kept without it.
   */
  mask?: ((text: string) => string) | undefined;
}): FidelityObserver {
  const verdicts: FidelityStep[] = [];
  return {
    async observe(step, output) {
      const call = options.trajectory[step.index];
      const recorded =
        call?.observation === undefined || !options.mask ? call?.observation : options.mask(call.observation);
      const view = await options.agent.observation(options.session, output);
      const verdict = compareStep(
        { index: step.index, recorded, replayed: view.text, agentRules: view.rules, exitCode: step.exit_code },
        { format: options.agent.format, keepChars: options.keepChars },
      );
      verdicts.push(verdict);
      return verdict;
    },
    result: () => summariseFidelity(verdicts),
  };
}
