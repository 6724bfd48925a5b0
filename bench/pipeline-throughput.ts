/**
 * End-to-end throughput of 1-step episodes: N episodes, each one `execute_bash true` step and no eval, submitted
 * with submitRun to a queue served by W workers × C episodes each, on an embedded vefaas-local. The clock runs
 * from just before the first enqueue to the commit of the last result (its results-stream id, Redis clock).
 * Every episode pays the whole pipeline: job claim, CreateSandbox → alive, bash session, tool-bundle upload,
 * the step, `git diff`, KillSandbox, lease writes, the exactly-once commit.
 * Run with real bubblewrap sandboxes, then with isolation 'emulated' (no processes: the pipeline's own ceiling).
 *
 *   npm run bench:pipeline -- [--episodes 150] [--workers 2] [--concurrency 8] [--in-process]
 *                             [--isolation bwrap,emulated] [--timeout-s 120]
 */
import { parseArgs } from 'node:util';
import type { HostIsolation } from '@rollout-fleet/vefaas-local';
import { benchEpisode, openBenchFleet } from './lib/bench-fleet.js';
import { machineLoad, ms, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    episodes: { type: 'string', default: '150' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
    'in-process': { type: 'boolean', default: false },
    isolation: { type: 'string', default: 'bwrap,emulated' },
    'timeout-s': { type: 'string', default: '120' },
  },
});
const EPISODES = Number(values.episodes);
const WORKERS = Number(values.workers);
const CONCURRENCY = Number(values.concurrency);
const PROCESSES = !values['in-process'];
const TIMEOUT_MS = Number(values['timeout-s']) * 1000;
const ISOLATIONS = values.isolation.split(',').map((s) => s.trim()) as HostIsolation[];

async function benchOne(isolation: HostIsolation): Promise<void> {
  const fleet = await openBenchFleet({ isolation });
  try {
    await fleet.startWorkers({ count: WORKERS, concurrency: CONCURRENCY, processes: PROCESSES });
    const runId = `bench-pipeline-${isolation}-${Date.now()}`;
    const episodes = Array.from({ length: EPISODES }, (_, i) => benchEpisode({ runId, episodeId: `e${i}`, steps: 1 }));
    const loadBefore = machineLoad();
    const run = await fleet.submitAndWait({ runId, episodes, timeoutMs: TIMEOUT_MS });
    const seconds = (run.lastCommitAt - run.startedAt) / 1000;
    const done = run.results.length;
    const failed = run.results.filter((r) => r.status !== 'completed');
    const retried = run.results.filter((r) => r.attempts.length > 1);
    const retryReasons = new Map<string, string>();
    for (const attempt of retried.flatMap((r) => r.attempts)) {
      if (attempt.failure && !retryReasons.has(attempt.failure.code))
        retryReasons.set(attempt.failure.code, attempt.failure.message.slice(0, 160));
    }
    const pick = (f: (r: (typeof run.results)[number]) => number) => run.results.map(f);
    const acquire = pick((r) => r.timings.sandbox_acquire_ms);
    const total = pick((r) => r.timings.total_ms);
    const wait = pick((r) => r.timings.queue_wait_ms);
    console.log(
      `\n${isolation}: ${EPISODES} one-step episodes, ${WORKERS} worker${WORKERS === 1 ? '' : 's'} ${PROCESSES ? '(processes)' : '(in-process)'} × concurrency ${CONCURRENCY}`,
    );
    if (!run.complete)
      console.log(`  INCOMPLETE: ${done} of ${EPISODES} results within --timeout-s ${TIMEOUT_MS / 1000}`);
    console.log(
      `  first enqueue → last result committed: ${seconds.toFixed(2)} s = ${(done / seconds).toFixed(1)} episodes/s`,
    );
    console.log(`  enqueue of all ${EPISODES}: ${ms(run.enqueuedAt - run.startedAt, 0)}`);
    console.log(
      `  per episode (worker's timings): total p50 ${ms(quantile(total, 0.5), 0)} p90 ${ms(quantile(total, 0.9), 0)}; sandbox acquire p50 ${ms(quantile(acquire, 0.5), 0)} p90 ${ms(quantile(acquire, 0.9), 0)}; queue wait p50 ${ms(quantile(wait, 0.5), 0)}`,
    );
    console.log(
      `  outcomes: ${done - failed.length} completed, ${failed.length} failed${failed[0] ? ` (first: ${failed[0].failure?.code} ${failed[0].failure?.message})` : ''}, ` +
        `${retried.length} needed a retry${retryReasons.size > 0 ? ` (${[...retryReasons].map(([code, message]) => `${code}: ${message}`).join('; ')})` : ''}`,
    );
    console.log(`  ${loadBefore} before, ${machineLoad()} after`);
    const live = fleet.host.liveSandboxes();
    if (live > 0)
      console.log(`  note: ${live} sandboxes not yet gone after the last commit (KillSandbox answers at Terminating)`);
    if (failed.length > 0 || !run.complete) process.exitCode = 1;
  } finally {
    await fleet.close();
  }
}

for (const isolation of ISOLATIONS) await benchOne(isolation);
console.log(
  `\ncommand: npm run bench:pipeline -- --episodes ${EPISODES} --workers ${WORKERS} --concurrency ${CONCURRENCY}${PROCESSES ? '' : ' --in-process'} --isolation ${ISOLATIONS.join(',')}`,
);
