import { describe, expect, it } from 'vitest';
import { createWorkerMetrics } from './worker-metrics.js';

describe('per-step metrics with bound label sets', () => {
  it('count into the same series as labelled calls do', async () => {
    const bound = createWorkerMetrics();
    const plain = createWorkerMetrics();
    const steps: Array<[string, number, string]> = [
      ['bash', 0.2, 'match'],
      ['str_replace_editor', 1.5, 'differs'],
      ['bash', 0.03, 'no_record'],
      ['bash', 7, 'match'],
    ];
    for (const [tool, seconds, verdict] of steps) {
      bound.perStep.step(tool, seconds);
      bound.perStep.fidelity(verdict);
      plain.steps.inc({ tool });
      plain.stepSeconds.observe({ tool }, seconds);
      plain.fidelitySteps.inc({ verdict });
    }
    const names = ['rf_steps_total', 'rf_step_duration_seconds', 'rf_fidelity_steps_total'];
    const values = async (m: ReturnType<typeof createWorkerMetrics>): Promise<unknown> =>
      (await m.registry.getMetricsAsJSON())
        .filter((metric) => names.includes(metric.name))
        .map((metric) => [metric.name, metric.values]);
    const expected = await values(plain);
    expect(await values(bound)).toEqual(expected);
    expect(JSON.stringify(expected)).toContain('"tool":"str_replace_editor"');
    for (const m of [bound, plain]) m.process.stop();
  });
});
