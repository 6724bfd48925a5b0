/**
 * Step and episode fidelity: each replayed step with a recorded observation is `match` or `differs` after the
 * normalisation of normalise.ts; steps without one are `no_record`. The episode figure is matched / compared.
 */
import type { Fidelity, FidelityStep } from '@rollout-fleet/shared';
import { lineDiff } from './line-diff.js';
import {
  FIDELITY_RULES_VERSION,
  miniCanonical,
  normaliseCommon,
  normaliseRecorded,
  type RecordingFormat,
} from './normalise.js';

export interface StepToCompare {
  index: number;
  /** The recorded observation; undefined when the trajectory has none for this step. */
  recorded: string | undefined;
  /** The replayed observation as the recording agent would have stored it (see agent-view.ts). */
  replayed: string;
  /** Agent-view transformations already applied to `replayed`. */
  agentRules?: readonly string[];
  exitCode: number | null;
}

export interface CompareOptions {
  format: RecordingFormat;
  /** `recorded` and `diff` of a differing step are clipped to about this many characters. */
  keepChars?: number;
}

function clip(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const half = Math.floor(limit / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters not kept …]\n${text.slice(-half)}`;
}

export function compareStep(step: StepToCompare, options: CompareOptions): FidelityStep {
  if (step.recorded === undefined) return { index: step.index, verdict: 'no_record' };
  const { format } = options;
  let recordedText = step.recorded;
  let replayedText = step.replayed;
  const sideRules: string[] = [...(step.agentRules ?? [])];
  if (format.agent === 'mini-swe-agent') {
    const canonical = miniCanonical(step.recorded, step.replayed, step.exitCode);
    if (canonical !== undefined) {
      recordedText = canonical.recorded;
      replayedText = canonical.replayed;
      sideRules.push('mini-output');
    }
  }
  const recorded =
    format.agent === 'mini-swe-agent' ? normaliseCommon(recordedText, format) : normaliseRecorded(recordedText, format);
  const replayed = normaliseCommon(replayedText, format);
  const rules = [...new Set([...sideRules, ...recorded.rules, ...replayed.rules])];
  const base: FidelityStep = { index: step.index, verdict: recorded.text === replayed.text ? 'match' : 'differs' };
  if (rules.length > 0) base.rules = rules;
  if (base.verdict === 'match') return base;
  const keep = options.keepChars ?? 16_000;
  return { ...base, recorded: clip(step.recorded, keep), diff: lineDiff(recorded.text, replayed.text, keep) };
}

/** The episode figure from its steps' verdicts. */
export function summariseFidelity(steps: readonly FidelityStep[]): Fidelity {
  const matched = steps.filter((step) => step.verdict === 'match').length;
  const differed = steps.filter((step) => step.verdict === 'differs').length;
  const compared = matched + differed;
  const first = steps.find((step) => step.verdict === 'differs');
  return {
    rules_version: FIDELITY_RULES_VERSION,
    compared,
    matched,
    differed,
    no_record: steps.length - compared,
    first_divergence: first === undefined ? null : first.index,
    ratio: compared === 0 ? null : matched / compared,
    steps: [...steps],
  };
}
