/**
 * Idle footprint of one `rollout-fleet worker` process (the process users run, spawned as bench:concurrency does)
 * on emulated vefaas-local: VmRSS and V8 heap once it has registered and sat idle for --settle-s seconds, the
 * median of --samples starts. What a worker costs before it holds any episode (runtime, code, connections).
 *
 *   npm run bench:idle -- [--samples 3] [--settle-s 8] [--concurrency 1000] [--worker-exec-argv='…']
 *
 * Last line: {"idle_rss_mb":…}
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { openBenchFleet } from './lib/bench-fleet.js';
import { machineLoad, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '3' },
    'settle-s': { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '1000' },
    'worker-exec-argv': { type: 'string', default: '' },
  },
});
const SAMPLES = Number(values.samples);
const SETTLE_MS = Number(values['settle-s']) * 1000;

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0) / 1024;
}

const rss: number[] = [];
for (let i = 0; i < SAMPLES; i++) {
  const fleet = await openBenchFleet({
    isolation: 'emulated',
    workerExecArgv: values['worker-exec-argv'].split(' ').filter((arg) => arg !== ''),
  });
  try {
    await fleet.startWorkers({ count: 1, concurrency: Number(values.concurrency), processes: true });
    const pid = fleet.workerPids()[0] as number;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    rss.push(await rssMb(pid));
  } finally {
    await fleet.close();
  }
}
console.log(
  `idle worker (concurrency ${values.concurrency}, ${SETTLE_MS / 1000} s after it registered): RSS ${rss.map((r) => r.toFixed(0)).join(' ')} MB; ${machineLoad()}`,
);
console.log(JSON.stringify({ idle_rss_mb: Math.round(quantile(rss, 0.5)) }));
