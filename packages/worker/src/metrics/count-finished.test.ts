import { describe, expect, it } from 'vitest';
import { rewardedResult } from '@rollout-fleet/test-kit/result-fixture';
import { countFinished, createWorkerMetrics } from './worker-metrics.js';

describe('countFinished', () => {
  it('counts every result by outcome, and failed ones by failure code and class', async () => {
    const metrics = createWorkerMetrics();
    try {
      const ref = { run_id: 'r', episode_id: 'e' };
      countFinished(metrics, rewardedResult(ref, 1));
      countFinished(metrics, rewardedResult(ref, 0));
      countFinished(metrics, rewardedResult({ ...ref, resolved: null, reward: null }, 0));
      countFinished(metrics, rewardedResult(ref, null));
      countFinished(metrics, {
        ...rewardedResult(ref, null),
        failure: { code: 'VEFAAS_BAD_REQUEST', class: 'input', message: 'bad' },
      });
      const outcomes = (await metrics.episodes.get()).values.map((v) => [v.labels.outcome, v.value]).sort();
      expect(outcomes).toEqual([
        ['failed', 2],
        ['resolved', 1],
        ['ungraded', 1],
        ['unresolved', 1],
      ]);
      const failures = (await metrics.failures.get()).values.map((v) => [v.labels.code, v.labels.class, v.value]);
      expect(failures.sort()).toEqual([
        ['SANDBOX_DEAD', 'infra', 1],
        ['VEFAAS_BAD_REQUEST', 'input', 1],
      ]);
    } finally {
      metrics.process.stop();
    }
  });
});
