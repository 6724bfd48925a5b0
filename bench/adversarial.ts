/**
 * The adversarial corpus as a figure (docs/adversarial-grading.md): runs every test file under test/adversarial
 * (vitest, JSON reporter) and prints one row per case — held (the defence held: the test passed) or reopened — then
 * what the result channel adds to an eval, measured where it runs: the pyutils tests under /usr/bin/python3
 * (`-m unittest -v` and `-m pytest -rA`), R runs each with and without the channel (plugin or sitecustomize hook,
 * key file, HMAC-chained records), interleaved pair by pair; the figure is the median and p90 of the pairs'
 * differences, ms. (Besides that, each eval makes 4 more SWE-ReX requests — nonce, key, two modules — and one read.)
 * Last line: `{"cases":N,"hold":M}`.
 *
 *   npm run bench:adversarial -- [--rounds 15] [--skip-corpus]
 */
import { execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GRADER = join(ROOT, 'packages/worker/grader');
const PYUTILS = join(ROOT, 'examples/images/pyutils');
const run = promisify(execFile);

interface VitestJson {
  testResults: Array<{ name: string; assertionResults: Array<{ fullName: string; status: string }> }>;
}

async function corpus(): Promise<{ cases: number; hold: number }> {
  const out = join(await mkdtemp(join(tmpdir(), 'rf-adv-')), 'report.json');
  await new Promise<void>((resolve) => {
    const child = spawn('npx', ['vitest', 'run', 'test/adversarial', '--reporter=json', `--outputFile=${out}`], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('exit', () => resolve());
  });
  const report = JSON.parse(await readFile(out, 'utf8')) as VitestJson;
  let cases = 0;
  let hold = 0;
  console.log('| file | case | outcome |\n|---|---|---|');
  for (const file of report.testResults) {
    const name = file.name.replace(`${ROOT}`, '');
    for (const test of file.assertionResults) {
      cases += 1;
      const held = test.status === 'passed';
      if (held) hold += 1;
      console.log(`| ${name} | ${test.fullName} | ${held ? 'held' : `reopened (${test.status})`} |`);
    }
  }
  return { cases, hold };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function timedRun(repo: string, args: string[], env: Record<string, string>): Promise<number> {
  const started = performance.now();
  await run('/usr/bin/python3', args, { cwd: repo, env: { PATH: '/usr/bin:/bin', ...env } }).catch(() => undefined);
  return performance.now() - started;
}

async function channelLatency(rounds: number): Promise<Record<string, { median_ms: number; p90_ms: number }>> {
  const work = await mkdtemp(join(tmpdir(), 'rf-chan-bench-'));
  const repo = join(work, 'repo');
  await cp(PYUTILS, repo, { recursive: true });
  const figures: Record<string, { median_ms: number; p90_ms: number }> = {};
  try {
    for (const [mode, args] of [
      ['unittest', ['-m', 'unittest', '-v']],
      ['pytest', ['-m', 'pytest', '-rA', '-p', 'no:cacheprovider', 'tests']],
    ] as const) {
      const diffs: number[] = [];
      for (let i = 0; i < rounds; i += 1) {
        const channel = join(work, `channel-${mode}-${i}`);
        await mkdir(channel);
        await writeFile(join(channel, 'key'), 'k'.repeat(32));
        const base = await timedRun(repo, [...args], {});
        const withChannel = await timedRun(repo, [...args], {
          RF_CHANNEL: channel,
          RF_CHANNEL_MODE: mode,
          PYTHONPATH: GRADER,
          PYTEST_ADDOPTS: '-p rf_result_channel',
        });
        diffs.push(withChannel - base);
      }
      figures[mode] = {
        median_ms: Math.round(quantile(diffs, 0.5) * 10) / 10,
        p90_ms: Math.round(quantile(diffs, 0.9) * 10) / 10,
      };
      console.log(
        `channel overhead, ${mode}: median ${figures[mode].median_ms} ms, p90 ${figures[mode].p90_ms} ms (${rounds} pairs)`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return figures;
}

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, 'skip-corpus': { type: 'boolean', default: false } },
});
const latency = await channelLatency(Number(values.rounds));
console.log(JSON.stringify({ channel_overhead: latency }));
const figure = values['skip-corpus'] ? { cases: 0, hold: 0 } : await corpus();
console.log(JSON.stringify(figure));
