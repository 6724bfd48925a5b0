/**
 * `npm run chaos`, CI-sized: 24 episodes (the 6 examples × 4 samples) through the whole sweep — own AOF
 * redis-server restarted by SHUTDOWN and by SIGKILL, sandbox-host with every fault kind, worker processes
 * SIGKILLed and replaced — then each invariant on its own. The fault dice are per endpoint and seeded, so the
 * n-th request of a kind always meets the same fault: seed 48 kills an instance at the 5th run_in_session and
 * times out the 10th cold start, so every kind is injected even in a run this small.
 */
import { expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { formatChaosReport, runChaosSweep, type ChaosReport } from '../bench/lib/chaos-sweep.js';

describeWith([bwrapNeed()], 'chaos sweep (CI size)', () => {
  it('keeps every invariant with every fault at once', async () => {
    const progress: string[] = [];
    const report: ChaosReport = await runChaosSweep({
      samples: 4,
      workers: 2,
      concurrency: 4,
      workerKills: 2,
      seed: 48,
      timeoutMs: 150_000,
      progress: (line) => progress.push(line),
    });
    const context = [...progress, ...formatChaosReport(report)].join('\n');
    const invariant = (name: string): number => report.invariants.find((i) => i.name === name)?.count ?? NaN;

    // The chaos happened: every fault kind, two worker SIGKILLs, one graceful and one SIGKILLed Redis restart.
    expect(report.complete, context).toBe(true);
    expect(report.workerSigkills, context).toBe(2);
    expect(report.redisRestarts, context).toEqual({ graceful: 1, sigkill: 1 });
    for (const kind of ['controlPlaneErrors', 'gatewayErrors', 'instanceDeaths', 'throttled', 'coldStartTimeouts']) {
      expect(report.faults[kind], `${kind}\n${context}`).toBeGreaterThan(0);
    }
    expect(report.logLines, context).toBeGreaterThan(100);
    expect(progress.filter((line) => line.startsWith('progress')).length, context).toBeGreaterThan(0);

    // The invariants, one by one.
    expect(invariant('results == episodes'), context).toBe(24);
    expect(report.results, context).toBe(report.episodes);
    expect(invariant('duplicate results'), context).toBe(0);
    expect(report.mismatches, context).toEqual([]);
    expect(report.unclassified, context).toEqual([]);
    expect(report.sandboxesAlive, context).toEqual([]);
    expect(report.secretHits, context).toEqual([]);
    expect(report.ok, context).toBe(true);
  }, 240_000);
});
