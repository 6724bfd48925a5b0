import { describe, expect, it } from 'vitest';
import { createWorkerMetrics } from './worker-metrics.js';
import { toolLabel } from './tool-label.js';

describe('the tool label of step metrics', () => {
  it("keeps the fleet's tool names: tool calls, SWE-agent's bundled tools, every profile's", () => {
    for (const name of ['bash', 'execute_bash', 'str_replace_editor', 'open', 'find_file', 'edit', 'submit'])
      expect(toolLabel(name)).toBe(name);
  });

  it('counts names from episode input that the fleet does not know as `other`: a bounded set of series', async () => {
    const metrics = createWorkerMetrics();
    try {
      for (let i = 0; i < 500; i++) metrics.perStep.step(`invented_tool_${i}`, 0.01);
      metrics.perStep.step('bash', 0.01);
      const steps = await metrics.steps.get();
      expect(steps.values.map((v) => [v.labels.tool, v.value]).sort()).toEqual([
        ['bash', 1],
        ['other', 500],
      ]);
    } finally {
      metrics.process.stop();
    }
  });
});
