/**
 * Per-step overhead of the worker against a bare SWE-ReX client loop, on the same embedded vefaas-local:
 * (a) bare: one sandbox, SwerexClient.runInSession `true` × K in sequence through the gateway (the body the
 *     worker sends for a step), per-step mean;
 * (b) worker: one episode of K `execute_bash true` steps run by startWorker (in this process, concurrency 1);
 *     per-step mean from the result's step durations (the SWE-ReX call as the worker times it) and from the
 *     replay phase's wall time, `timings.replay_ms / K` (adds per-step command conversion, job progress, the
 *     job log line and metrics).
 * Ratios worker / bare for both. The worker and the bare loop share this process with the host, alike.
 *
 *   npm run bench:overhead -- [--steps 200] [--isolation bwrap|none|emulated] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { SwerexClient, buildStartCommand } from '@rollout-fleet/sandbox';
import type { HostIsolation } from '@rollout-fleet/vefaas-local';
import { benchEpisode, openBenchFleet, SMALL_IMAGE, type BenchFleet } from './lib/bench-fleet.js';
import { machineLoad, mean, ms, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '200' },
    isolation: { type: 'string', default: 'bwrap' },
    rounds: { type: 'string', default: '3' },
  },
});
const STEPS = Number(values.steps);
const ISOLATION = values.isolation as HostIsolation;
const ROUNDS = Number(values.rounds);
const WARMUP = 10;

async function bareLoop(fleet: BenchFleet): Promise<number[]> {
  const { host, vefaas } = fleet;
  const start = buildStartCommand();
  const { SandboxId } = await vefaas.createSandbox({
    FunctionId: host.functionId,
    InstanceImageInfo: { Image: SMALL_IMAGE, Command: start.command },
  });
  try {
    const swerex = new SwerexClient({ baseUrl: host.gatewayUrl, instanceName: SandboxId, apiKey: start.authToken });
    await swerex.waitUntilAlive({ timeoutMs: 30_000, intervalMs: 20 });
    await swerex.createSession({ session: 'default' });
    const step = () =>
      swerex.runInSession(
        { action_type: 'bash', session: 'default', command: 'true', timeout: 300, check: 'silent' },
        { retries: 1 },
      );
    for (let i = 0; i < WARMUP; i++) await step();
    const samples: number[] = [];
    for (let i = 0; i < STEPS; i++) {
      const t0 = performance.now();
      await step();
      samples.push(performance.now() - t0);
    }
    return samples;
  } finally {
    await vefaas.killSandbox({ FunctionId: host.functionId, SandboxId });
  }
}

async function workerEpisode(fleet: BenchFleet, round: number): Promise<{ stepMs: number[]; replayPerStepMs: number }> {
  const runId = `bench-overhead-${Date.now()}-${round}`;
  const run = await fleet.submitAndWait({
    runId,
    episodes: [benchEpisode({ runId, episodeId: 'long', steps: STEPS })],
    timeoutMs: 150_000,
  });
  const result = run.results[0];
  if (!run.complete || result?.status !== 'completed' || result.steps.length !== STEPS) {
    throw new Error(
      `worker episode did not complete: ${result?.failure?.code ?? 'no result'} ${result?.failure?.message ?? ''}`,
    );
  }
  return { stepMs: result.steps.map((s) => s.duration_ms), replayPerStepMs: result.timings.replay_ms / STEPS };
}

const fleet = await openBenchFleet({ isolation: ISOLATION });
try {
  await fleet.startWorkers({ count: 1, concurrency: 1, processes: false });
  console.log(
    `isolation ${ISOLATION}, K = ${STEPS} steps, ${ROUNDS} rounds (bare loop then worker episode), ${machineLoad()}`,
  );
  const bare: number[] = [];
  const steps: number[] = [];
  const replay: number[] = [];
  const roundRatios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const b = await bareLoop(fleet);
    const w = await workerEpisode(fleet, round);
    bare.push(...b);
    steps.push(...w.stepMs);
    replay.push(w.replayPerStepMs);
    roundRatios.push(w.replayPerStepMs / mean(b));
    console.log(
      `  round ${round + 1}: bare mean ${ms(mean(b), 2)}; worker step mean ${ms(mean(w.stepMs), 2)}, replay_ms/K ${ms(w.replayPerStepMs, 2)}`,
    );
  }
  const bareMean = mean(bare);
  const stepMean = mean(steps);
  const replayMean = mean(replay);
  console.log(
    `(a) bare SwerexClient loop:     mean ${ms(bareMean, 2)} per step (median ${ms(quantile(bare, 0.5), 2)}, p90 ${ms(quantile(bare, 0.9), 2)})`,
  );
  console.log(
    `(b) worker, step durations:     mean ${ms(stepMean, 2)} per step (median ${ms(quantile(steps, 0.5), 2)}, p90 ${ms(quantile(steps, 0.9), 2)}) → ratio ${(stepMean / bareMean).toFixed(2)}`,
  );
  console.log(
    `    worker, replay_ms / K:      mean ${ms(replayMean, 2)} per step → ratio ${(replayMean / bareMean).toFixed(2)}, overhead ${ms(replayMean - bareMean, 2)} per step`,
  );
  // Each round runs the bare loop right before the worker's episode: the median of those ratios is the least
  // disturbed by other load on the machine drifting between rounds.
  console.log(
    `    per-round ratios (replay_ms / K ÷ bare): ${roundRatios.map((r) => r.toFixed(2)).join(' ')}; median ${quantile(roundRatios, 0.5).toFixed(2)}`,
  );
  console.log(`${machineLoad()} at the end`);
  console.log(`command: npm run bench:overhead -- --steps ${STEPS} --isolation ${ISOLATION} --rounds ${ROUNDS}`);
} finally {
  await fleet.close();
}
