/**
 * The policy loop's own cost, against the scripted OpenAI-compatible server (in this process, real HTTP):
 * (a) overhead: one K-turn policy episode (K-1 `bash true` turns, then submit) run by startWorker (in this process,
 *     concurrency 1) on an embedded vefaas-local. Per turn, the worker's overhead beyond the policy server's own
 *     time (the server's handling time as it measured it) and the sandbox's own time (the step durations, i.e. the
 *     SWE-ReX call as the worker times it): turn duration − server time − step time. The same beyond the request's
 *     client-side latency (what is left: message building, token capture, reply planning). And per turn from the
 *     loop's wall time (`timings.replay_ms / K`, which adds the inflight-slot round trips and the job progress/log
 *     writes). Median and p90 over all rounds.
 * (b) throughput: N policy episodes of T turns each (T-1 `bash true` turns, then submit) on emulated vefaas-local
 *     (no processes: the pipeline's own ceiling), served by W `rollout-fleet worker` processes × C episodes; clock
 *     from just before the first enqueue to the last result's commit. Each episode needs one sandbox, so the
 *     fleet's create rate (RF_FLEET_CREATE_RATE, default 8/s, the platform's) bounds it unless `--create-rate`
 *     raises it (then the loop, Redis and the scripted server on these cores are the limit).
 *
 *   npm run bench:policy -- [--parts overhead,throughput] [--turns 100] [--rounds 3] [--isolation bwrap]
 *                           [--episodes 100] [--episode-turns 20] [--workers 2] [--concurrency 8] [--create-rate 8] [--timeout-s 180]
 */
import { parseArgs } from 'node:util';
import { EpisodeSchema, type Episode, type EpisodeResult } from '@rollout-fleet/shared';
import {
  startScriptedPolicyServer,
  type PolicyScript,
  type ScriptedPolicyServer,
} from '@rollout-fleet/test-kit/scripted-policy';
import type { HostIsolation } from '@rollout-fleet/vefaas-local';
import { SMALL_IMAGE, openBenchFleet } from './lib/bench-fleet.js';
import { machineLoad, mean, ms, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    parts: { type: 'string', default: 'overhead,throughput' },
    turns: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    isolation: { type: 'string', default: 'bwrap' },
    episodes: { type: 'string', default: '100' },
    'episode-turns': { type: 'string', default: '20' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    'timeout-s': { type: 'string', default: '180' },
    'create-rate': { type: 'string', default: '8' },
  },
});
const PARTS = values.parts.split(',').map((s) => s.trim());
const TURNS = Number(values.turns);
const ROUNDS = Number(values.rounds);
const ISOLATION = values.isolation as HostIsolation;
const EPISODES = Number(values.episodes);
const EPISODE_TURNS = Number(values['episode-turns']);
const WORKERS = Number(values.workers);
const CONCURRENCY = Number(values.concurrency);
const TIMEOUT_MS = Number(values['timeout-s']) * 1000;
const CREATE_RATE = Number(values['create-rate']);
const KEY_ENV = 'BENCH_POLICY_API_KEY';
const KEY = 'bench-policy-key-0123456789';

function scriptOf(turns: number): PolicyScript {
  const step = { reply: { tool_calls: [{ name: 'bash', arguments: { command: 'true' } }] } };
  return {
    turns: [
      ...Array.from({ length: turns - 1 }, () => step),
      { reply: { tool_calls: [{ name: 'submit', arguments: {} }] } },
    ],
  };
}

function policyEpisode(o: {
  runId: string;
  episodeId: string;
  baseUrl: string;
  model: string;
  turns: number;
}): Episode {
  return EpisodeSchema.parse({
    run_id: o.runId,
    episode_id: o.episodeId,
    instance_id: o.episodeId,
    sandbox: { image: SMALL_IMAGE },
    problem_statement: 'Benchmark: run `true` until told to submit.',
    limits: { step_timeout_s: 60, episode_deadline_s: 600 },
    policy: {
      base_url: o.baseUrl,
      model: o.model,
      api_key_env: KEY_ENV,
      sampling: { temperature: 0, max_completion_tokens: 64 },
      limits: { max_turns: o.turns + 1, request_timeout_s: 60 },
    },
  });
}

function failureSummary(results: readonly EpisodeResult[]): string {
  const failed = results.filter((r) => r.status !== 'completed' || r.exit_status !== 'submitted');
  return failed.length === 0
    ? 'all submitted'
    : `${failed.length} not submitted (first: ${failed[0]!.failure?.code ?? failed[0]!.exit_status} ${failed[0]!.failure?.message ?? ''})`;
}

async function overhead(server: ScriptedPolicyServer): Promise<void> {
  const fleet = await openBenchFleet({ isolation: ISOLATION });
  try {
    await fleet.startWorkers({ count: 1, concurrency: 1, processes: false, secrets: { [KEY_ENV]: KEY } });
    console.log(
      `\n(a) overhead: one ${TURNS}-turn policy episode per round, ${ROUNDS} rounds, isolation ${ISOLATION}, in-process worker (concurrency 1); ${machineLoad()}`,
    );
    const beyondServer: number[] = [];
    const beyondLatency: number[] = [];
    const serverMs: number[] = [];
    const latencyMs: number[] = [];
    const stepMs: number[] = [];
    const loopPerTurn: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const model = `overhead-${round}`;
      const runId = `bench-policy-overhead-${Date.now()}-${round}`;
      const run = await fleet.submitAndWait({
        runId,
        episodes: [policyEpisode({ runId, episodeId: 'long', baseUrl: server.baseUrl, model, turns: TURNS })],
        timeoutMs: TIMEOUT_MS,
      });
      const result = run.results[0];
      if (!run.complete || result?.exit_status !== 'submitted' || result.turns?.length !== TURNS) {
        throw new Error(`overhead episode did not complete: ${result ? failureSummary([result]) : 'no result'}`);
      }
      const replies = server.requestsFor(model).filter((r) => r.outcome === 'reply');
      if (replies.length !== TURNS)
        throw new Error(`expected ${TURNS} answered requests, the server saw ${replies.length}`);
      let roundServer = 0;
      let roundSteps = 0;
      result.turns.forEach((turn, t) => {
        const steps = turn.steps.reduce((sum, i) => sum + result.steps[i]!.duration_ms, 0);
        const handled = replies[t]!.handledMs;
        beyondServer.push(turn.duration_ms - handled - steps);
        beyondLatency.push(turn.duration_ms - turn.latency_ms - steps);
        serverMs.push(handled);
        latencyMs.push(turn.latency_ms);
        if (turn.steps.length > 0) stepMs.push(steps);
        roundServer += handled;
        roundSteps += steps;
      });
      const loop = (result.timings.replay_ms - roundServer - roundSteps) / TURNS;
      loopPerTurn.push(loop);
      console.log(
        `  round ${round + 1}: turn overhead beyond server + sandbox median ${ms(quantile(beyondServer.slice(-TURNS), 0.5), 2)}; loop wall time ${ms(loop, 2)} per turn`,
      );
    }
    console.log(
      `  policy server's own time per request:       median ${ms(quantile(serverMs, 0.5), 2)}, p90 ${ms(quantile(serverMs, 0.9), 2)}`,
    );
    console.log(
      `  request latency as the worker sees it:      median ${ms(quantile(latencyMs, 0.5), 2)}, p90 ${ms(quantile(latencyMs, 0.9), 2)}`,
    );
    console.log(
      `  sandbox step (bash true) as the worker sees it: median ${ms(quantile(stepMs, 0.5), 2)}, p90 ${ms(quantile(stepMs, 0.9), 2)}`,
    );
    console.log(
      `  WORKER OVERHEAD PER TURN beyond the server's and the sandbox's own time: median ${ms(quantile(beyondServer, 0.5), 2)}, p90 ${ms(quantile(beyondServer, 0.9), 2)}`,
    );
    console.log(
      `    of which beyond the request latency (loop bookkeeping alone): median ${ms(quantile(beyondLatency, 0.5), 2)}, p90 ${ms(quantile(beyondLatency, 0.9), 2)}`,
    );
    console.log(
      `    per turn from the loop's wall time (adds inflight-slot round trips, job progress + log writes): mean ${ms(mean(loopPerTurn), 2)}`,
    );
  } finally {
    await fleet.close();
  }
}

async function throughput(server: ScriptedPolicyServer): Promise<void> {
  // The burst equals one second of the rate, as the platform's token bucket does.
  const fleet = await openBenchFleet({
    isolation: 'emulated',
    env: {
      RF_FLEET_CREATE_RATE: String(CREATE_RATE),
      RF_FLEET_CREATE_BURST: String(Math.max(1, Math.round(CREATE_RATE))),
    },
  });
  try {
    await fleet.startWorkers({
      count: WORKERS,
      concurrency: CONCURRENCY,
      processes: true,
      secrets: { [KEY_ENV]: KEY },
    });
    const runId = `bench-policy-throughput-${Date.now()}`;
    const model = 'throughput';
    const episodes = Array.from({ length: EPISODES }, (_unused, i) =>
      policyEpisode({ runId, episodeId: `e${i}`, baseUrl: server.baseUrl, model, turns: EPISODE_TURNS }),
    );
    const loadBefore = machineLoad();
    const run = await fleet.submitAndWait({ runId, episodes, timeoutMs: TIMEOUT_MS });
    const seconds = (run.lastCommitAt - run.startedAt) / 1000;
    const done = run.results.length;
    const turns = run.results.reduce((n, r) => n + (r.turns?.length ?? 0), 0);
    const latency = run.results.flatMap((r) => (r.turns ?? []).map((t) => t.latency_ms));
    const waits = run.results.flatMap((r) => (r.turns ?? []).map((t) => t.slot_wait_ms));
    const totals = run.results.map((r) => r.timings.total_ms);
    const acquire = run.results.map((r) => r.timings.sandbox_acquire_ms);
    const loops = run.results.map((r) => r.timings.replay_ms);
    console.log(
      `\n(b) throughput: ${EPISODES} policy episodes × ${EPISODE_TURNS} turns on emulated vefaas-local, ${WORKERS} worker processes × concurrency ${CONCURRENCY}, fleet create rate ${CREATE_RATE}/s`,
    );
    if (!run.complete)
      console.log(`  INCOMPLETE: ${done} of ${EPISODES} results within --timeout-s ${TIMEOUT_MS / 1000}`);
    console.log(
      `  first enqueue → last result committed: ${seconds.toFixed(2)} s = ${(done / seconds).toFixed(2)} EPISODES/S (${(turns / seconds).toFixed(0)} turns/s)`,
    );
    console.log(
      `  per episode: total p50 ${ms(quantile(totals, 0.5), 0)} p90 ${ms(quantile(totals, 0.9), 0)}; request latency p50 ${ms(quantile(latency, 0.5), 1)} p90 ${ms(quantile(latency, 0.9), 1)}; inflight-slot wait p90 ${ms(quantile(waits, 0.9), 1)}`,
    );
    console.log(
      `  where an episode's time goes (p50): sandbox acquire ${ms(quantile(acquire, 0.5), 0)}, agent loop ${ms(quantile(loops, 0.5), 0)} (${ms(quantile(loops, 0.5) / EPISODE_TURNS, 1)} per turn)`,
    );
    console.log(
      `  outcomes: ${failureSummary(run.results)}; the server answered ${server.requestsFor(model).filter((r) => r.outcome === 'reply').length} requests`,
    );
    console.log(`  ${loadBefore} before, ${machineLoad()} after`);
    if (!run.complete || run.results.some((r) => r.exit_status !== 'submitted')) process.exitCode = 1;
  } finally {
    await fleet.close();
  }
}

const scripts: Record<string, PolicyScript> = { throughput: scriptOf(EPISODE_TURNS) };
for (let round = 0; round < ROUNDS; round++) scripts[`overhead-${round}`] = scriptOf(TURNS);
const server = await startScriptedPolicyServer({ scripts, apiKey: KEY });
try {
  if (PARTS.includes('overhead')) await overhead(server);
  if (PARTS.includes('throughput')) await throughput(server);
} finally {
  await server.close();
}
console.log(
  `\ncommand: npm run bench:policy -- --parts ${PARTS.join(',')} --turns ${TURNS} --rounds ${ROUNDS} --isolation ${ISOLATION} ` +
    `--episodes ${EPISODES} --episode-turns ${EPISODE_TURNS} --workers ${WORKERS} --concurrency ${CONCURRENCY} --create-rate ${CREATE_RATE}`,
);
