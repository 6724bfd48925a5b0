/**
 * `npm run chaos`: one sweep through every fault at once, then the invariants (see lib/chaos-sweep.ts).
 * Options after `--`: --samples 50 (× the 6 examples), --workers 3, --concurrency 4, --worker-kills 3, --seed 14,
 * --timeout-s 1500. Prints progress while it runs, then the figures and each invariant with its count; exits 1
 * when an invariant fails (or the sweep did not finish in time), 0 otherwise.
 */
import { parseArgs } from 'node:util';
import { formatChaosReport, runChaosSweep } from './lib/chaos-sweep.js';
import { machineLoad } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    samples: { type: 'string', default: '50' },
    workers: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '4' },
    'worker-kills': { type: 'string', default: '3' },
    seed: { type: 'string', default: '14' },
    'timeout-s': { type: 'string', default: '1500' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(
    'usage: npm run chaos -- [--samples 50] [--workers 3] [--concurrency 4] [--worker-kills 3] [--seed 14] [--timeout-s 1500]',
  );
  process.exit(0);
}

const options = {
  samples: Number(values.samples),
  workers: Number(values.workers),
  concurrency: Number(values.concurrency),
  workerKills: Number(values['worker-kills']),
  seed: Number(values.seed),
  timeoutMs: Number(values['timeout-s']) * 1000,
};
for (const [name, value] of Object.entries(options)) {
  if (!Number.isInteger(value) || value < 0 || (name !== 'workerKills' && value === 0)) {
    console.error(
      `chaos: --${name} must be a whole number${name === 'workerKills' ? '' : ' ≥ 1'}, got ${String(value)}`,
    );
    process.exit(2);
  }
}

const command = `npm run chaos -- --samples ${options.samples} --workers ${options.workers} --concurrency ${options.concurrency} --worker-kills ${options.workerKills} --seed ${options.seed}`;
console.log(`chaos      ${command} (${machineLoad()})`);
const report = await runChaosSweep({ ...options, progress: (line) => console.log(line) });
console.log('');
for (const line of formatChaosReport(report)) console.log(line);
console.log(`${report.ok ? 'chaos: every invariant holds' : 'chaos: INVARIANTS FAILED'} (${machineLoad()})`);
console.log(
  JSON.stringify({
    episodes: report.episodes,
    results: report.results,
    seconds: Math.round(report.seconds),
    faults: report.faults,
    worker_sigkills: report.workerSigkills,
    redis_restarts: report.redisRestarts,
    invariants: Object.fromEntries(report.invariants.map((i) => [i.name, i.count])),
  }),
);
process.exitCode = report.ok ? 0 : 1;
