/**
 * One worker process at concurrency 1,000 on emulated vefaas-local (no processes per sandbox) with latencies
 * as a real fleet sees them (÷ --compress, 1 by default): cold starts 3–8 s, steps 50–500 ms. Measured:
 * - the worker's RSS (VmRSS of the `rollout-fleet worker` child, sampled every 200 ms; the peak);
 * - its event-loop delay p99 (the worker publishes the p99 of every 5 s window; the worst window);
 * - Redis bytes per queued episode beyond its payload: MEMORY USAGE of every key of the run's prefix after
 *   enqueueing (before any worker runs), minus the episodes' payload bytes, per episode.
 * Goals: RSS ≤ 300 MB, loop lag p99 ≤ 50 ms.
 *
 *   npm run bench:concurrency -- [--concurrency 1000] [--episodes 2500] [--steps 20] [--compress 1]
 *                                [--worker-node-options=--max-old-space-size=192]
 *                                [--worker-exec-argv='--cpu-prof --cpu-prof-dir=/tmp/prof']
 *
 * Last line: {"rss_mb":…,"loop_lag_p99_ms":…,"redis_bytes_per_episode":…}
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { EpisodeSchema, keysMatching, type Episode } from '@rollout-fleet/shared';
import { openBenchFleet } from './lib/bench-fleet.js';
import { machineLoad, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '1000' },
    episodes: { type: 'string', default: '2500' },
    steps: { type: 'string', default: '20' },
    compress: { type: 'string', default: '1' },
    'worker-node-options': { type: 'string', default: '' },
    // Flags NODE_OPTIONS refuses (--cpu-prof, --heap-prof), given on the worker child's command line.
    'worker-exec-argv': { type: 'string', default: '' },
  },
});
const CONCURRENCY = Number(values.concurrency);
const N = Number(values.episodes);
const STEPS = Number(values.steps);
const K = Number(values.compress);

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const fleet = await openBenchFleet({
  isolation: 'emulated',
  workerExecArgv: values['worker-exec-argv'].split(' ').filter((arg) => arg !== ''),
  host: {
    faults: {
      coldStart: { delayMs: { min: Math.round(3000 / K), max: Math.round(8000 / K) } },
      gateway: { latencyMs: { '/run_in_session': { min: Math.round(50 / K), max: Math.round(500 / K) } } },
    },
  },
  env: {
    RF_FLEET_MAX_SANDBOXES: String(CONCURRENCY + 100),
    RF_FLEET_MAX_STARTING: String(CONCURRENCY + 100),
    RF_FLEET_CREATE_RATE: '500',
    RF_FLEET_CREATE_BURST: '100',
    RF_STRAGGLERS: 'false',
    // e.g. --worker-node-options=--max-old-space-size=192: how much of the RSS is V8 heap slack.
    ...(values['worker-node-options'] ? { NODE_OPTIONS: values['worker-node-options'] } : {}),
  },
});
try {
  const runId = `concurrency-${Date.now()}`;
  const episodes: Episode[] = Array.from({ length: N }, (_, i) =>
    EpisodeSchema.parse({
      run_id: runId,
      episode_id: `e${i}`,
      instance_id: `inst-${i % 100}`,
      sandbox: { image: `img-${i % 100}` },
      tools: ['execute_bash'],
      trajectory: Array.from({ length: STEPS }, (_, k) => ({
        name: 'execute_bash',
        arguments: { command: `echo step ${k}` },
      })),
    }),
  );

  // Redis bytes per queued episode, before any worker takes one.
  const enqueueStarted = performance.now();
  await fleet.submit({ runId, episodes });
  const enqueueMs = performance.now() - enqueueStarted;
  // What each job carries (BullMQ stores the JSON of the job data): the episode and its enqueue time.
  const payloadBytes = episodes.reduce(
    (sum, episode) => sum + Buffer.byteLength(JSON.stringify({ episode, enqueued_at: new Date().toISOString() })),
    0,
  );
  const keys = [
    ...(await keysMatching(fleet.redis, `${fleet.config.queue.prefix}:*`)),
    ...(await keysMatching(fleet.redis, `rf:${fleet.config.queue.prefix}:*`)),
  ];
  let bytes = 0;
  for (const key of keys) bytes += Number((await fleet.redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
  const perEpisode = (bytes - payloadBytes) / N;
  console.log(
    `enqueued ${N} episodes in ${(enqueueMs / 1000).toFixed(2)} s: Redis holds ${(bytes / 1e6).toFixed(1)} MB in ${keys.length} keys; payloads ${(payloadBytes / 1e6).toFixed(1)} MB → ${perEpisode.toFixed(0)} bytes per episode beyond its payload`,
  );

  await fleet.startWorkers({ count: 1, concurrency: CONCURRENCY, processes: true });
  const pid = fleet.workerPids()[0] as number;
  const idleRss = await rssMb(pid);
  let peakRss = idleRss;
  const lagWindows: number[] = [];
  /** The worker's V8 heap at each published window (MB): used / committed / external. */
  const heapWindows: string[] = [];
  let sampling = true;
  const rssLoop = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, await rssMb(pid));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const lagLoop = (async () => {
    while (sampling) {
      const raw = await fleet.redis.hgetall(fleet.keys.metrics());
      for (const snapshot of Object.values(raw)) {
        const metrics = (
          JSON.parse(snapshot) as { at: number; metrics: Array<{ name: string; values: Array<{ value: number }> }> }
        ).metrics;
        const p99 = metrics.find((m) => m.name === 'rf_event_loop_lag_p99_seconds')?.values[0]?.value;
        if (p99 !== undefined) lagWindows.push(p99 * 1000);
        const heap = (metrics.find((m) => m.name === 'rf_process_heap_bytes')?.values ?? []) as Array<{
          value: number;
          labels?: { kind?: string };
        }>;
        const mb = (kind: string): string => ((heap.find((v) => v.labels?.kind === kind)?.value ?? 0) / 1e6).toFixed(0);
        if (heap.length > 0) heapWindows.push(`${mb('used')}/${mb('total')}/${mb('external')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  })();
  const started = performance.now();
  const workerCpuBefore = await cpuSeconds(pid);
  const benchCpuBefore = process.cpuUsage();
  const run = await fleet.waitFor({ runId, count: N, timeoutMs: 900_000, startedAt: Date.now() });
  // Before the samplers stop: the lag sampler sleeps 5 s between reads, which would round the run up by up to 5 s.
  const wallS = (performance.now() - started) / 1000;
  const workerCpuS = (await cpuSeconds(pid)) - workerCpuBefore;
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const benchCpuS = (benchCpu.user + benchCpu.system) / 1e6;
  sampling = false;
  await Promise.all([rssLoop, lagLoop]);
  const failed = run.results.filter((r) => r.status !== 'completed').length;
  // The first window includes worker start-up; the figure is the worst window while episodes ran.
  const lag = lagWindows.length > 1 ? Math.max(...lagWindows.slice(1)) : (lagWindows[0] ?? NaN);
  const acquire = run.results.map((r) => r.timings.sandbox_acquire_ms);
  console.log(
    `worker at concurrency ${CONCURRENCY}: ${N} episodes × ${STEPS} steps in ${wallS.toFixed(1)} s (${(N / wallS).toFixed(1)} episodes/s), failed ${failed}`,
  );
  console.log(
    `  RSS idle ${idleRss.toFixed(0)} MB, peak ${peakRss.toFixed(0)} MB; event-loop delay p99 per 5 s window: ${lagWindows.map((x) => x.toFixed(1)).join(' ')} ms (worst while running ${lag.toFixed(1)} ms)`,
  );
  console.log(
    `  CPU while running: worker ${workerCpuS.toFixed(1)} s (${((workerCpuS / N) * 1000).toFixed(1)} ms per episode, ${((workerCpuS / (N * STEPS)) * 1000).toFixed(2)} ms per step, ${((workerCpuS / wallS) * 100).toFixed(0)} % of a core); bench process (host + client) ${benchCpuS.toFixed(1)} s`,
  );
  console.log(`  V8 heap per 5 s window, used/committed/external MB: ${heapWindows.join(' ')}`);
  console.log(
    `  sandbox acquire p50 ${(quantile(acquire, 0.5) / 1000).toFixed(2)} s, p90 ${(quantile(acquire, 0.9) / 1000).toFixed(2)} s; ${machineLoad()}`,
  );
  const nodeOptions = values['worker-node-options'] ? ` --worker-node-options=${values['worker-node-options']}` : '';
  console.log(
    `command: npm run bench:concurrency -- --concurrency ${CONCURRENCY} --episodes ${N} --steps ${STEPS} --compress ${K}${nodeOptions}`,
  );
  console.log(
    JSON.stringify({
      rss_mb: Math.round(peakRss),
      loop_lag_p99_ms: Number(lag.toFixed(1)),
      redis_bytes_per_episode: Math.round(perEpisode),
    }),
  );
} finally {
  await fleet.close();
}
