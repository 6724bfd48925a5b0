/**
 * The per-step metric updates of an episode, with each label set bound once: prom-client hashes a label object
 * on every `inc({tool})` / `observe({tool}, v)`, and that ran three times per step at a thousand steps a second.
 * A label value seen for the first time is bound then (`.labels(...)`); tool names outside the fleet's vocabulary
 * count as `other` (tool-label.ts).
 */
import type { Counter, Histogram } from 'prom-client';
import { OTHER_TOOL, toolLabel } from './tool-label.js';

export interface StepMetrics {
  /** One replayed or executed step of `tool` that took `seconds`. */
  step(tool: string, seconds: number): void;
  /** One replayed step compared with its recording. */
  fidelity(verdict: string): void;
}

export function createStepMetrics(metrics: {
  steps: Counter<'tool'>;
  stepSeconds: Histogram<'tool'>;
  fidelitySteps: Counter<'verdict'>;
}): StepMetrics {
  const byTool = new Map<string, { count: Counter.Internal; seconds: Histogram.Internal<'tool'> }>();
  const byVerdict = new Map<string, Counter.Internal>();
  return {
    step(tool, seconds) {
      let bound = byTool.get(tool);
      if (bound === undefined) {
        const label = toolLabel(tool);
        bound = { count: metrics.steps.labels(label), seconds: metrics.stepSeconds.labels(label) };
        // Bound per known name; unknown names share `other` without growing this map.
        if (label !== OTHER_TOOL) byTool.set(tool, bound);
      }
      bound.count.inc();
      bound.seconds.observe(seconds);
    },
    fidelity(verdict) {
      let bound = byVerdict.get(verdict);
      if (bound === undefined) {
        bound = metrics.fidelitySteps.labels(verdict);
        byVerdict.set(verdict, bound);
      }
      bound.inc();
    },
  };
}
