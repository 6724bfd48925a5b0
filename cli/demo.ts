/**
 * `npm run demo`: the whole product on one machine in under two minutes. Finds or starts Redis, embeds
 * vefaas-local (real sandboxes under bubblewrap), submits the examples/ sweep, runs two worker processes,
 * shows progress, prints a results table and checks the outcomes against examples/expected.json.
 * `npm run demo -- --policy`: the same with a model choosing every action (a scripted policy server; see
 * demo-policy.ts), checked against examples/policy/expected.json.
 * Exit 0 only when every episode finished with its expected outcome.
 *
 * Where bubblewrap cannot run (not installed, user namespaces refused) the demo still runs, WITHOUT
 * isolation, and says so in one line. That is safe only because nothing but the repository's own examples
 * can reach those sandboxes: the demo takes no input, submits the bundled examples alone (examples/sweep.jsonl, or examples/policy/ with --policy), and its queue has
 * a prefix of its own (`{rf-demo-<random>}`) that no other submitter can know.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import {
  createKeyspace,
  createLogger,
  createRedis,
  deleteKeysMatching,
  findRedis,
  getRunStatus,
  ResultStore,
  type EpisodeJobData,
  type EpisodeResult,
} from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { checkIsolation, startVefaasLocal } from '@rollout-fleet/vefaas-local';
import { startPolicyDemo, type PolicyDemo } from './demo-policy.js';
import { EXIT } from './exit-codes.js';
import { progressLine } from './runtime/progress.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const WORKERS = 2;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ')).join('\n');
}

const USAGE = `Usage: npm run demo [-- --policy]

Runs the bundled examples end to end on this machine (Redis, a local veFaaS, two workers) and checks every outcome
against examples/expected.json; --policy runs examples/policy/ with a scripted model choosing each action.
It takes no input of yours: submit your own episodes with \`rollout-fleet submit\` to workers on a jailed fleet.
Exit codes: 0 every outcome as expected, 1 some differ, 2 bad arguments, 4 Redis unavailable.`;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return EXIT.OK;
  }
  // The sandboxes may run without isolation (below): nothing but the bundled examples may ever reach them.
  const unknown = args.filter((arg) => arg !== '--policy');
  if (unknown.length > 0) {
    console.error(
      `demo: takes no input (got ${unknown.join(' ')}); it runs only the bundled examples. Submit your own episodes with \`rollout-fleet submit <file>\` (see \`rollout-fleet submit --help\`).`,
    );
    return EXIT.USAGE;
  }
  const started = performance.now();
  const say = (line: string): void => console.log(line);
  let redisHandle;
  try {
    redisHandle = await findRedis(process.env.REDIS_URL);
  } catch (err) {
    console.error(`demo: ${(err as Error).message}`);
    return EXIT.UNAVAILABLE;
  }
  say(`redis      ${redisHandle.url} (${redisHandle.origin})`);
  const logger = createLogger({ level: 'warn', format: 'auto', destination: process.stderr });
  const jail = checkIsolation();
  if (!jail.bwrap) {
    say(
      `isolation  OFF: bubblewrap cannot run here (${jail.reason ?? 'unknown reason'}); running only the bundled examples without isolation — install bubblewrap (sudo apt-get install -y bubblewrap) before running anything else`,
    );
  }
  // Unguessable, so that no other submitter can put work on the queue these (maybe unjailed) sandboxes serve.
  const PREFIX = `{rf-demo-${randomUUID().slice(0, 8)}}`;
  const policyDemo: PolicyDemo | undefined = args.includes('--policy') ? await startPolicyDemo(root) : undefined;
  if (policyDemo)
    say(`policy     scripted OpenAI-compatible server ${policyDemo.server.baseUrl} (examples/policy/scripts.json)`);
  const host = await startVefaasLocal({
    imagesDir: `${root}examples/images`,
    isolation: jail.bwrap ? 'bwrap' : 'none',
    // The line above already says isolation is off; the host's own warning would repeat it.
    logger: logger.child({ component: 'vefaas-local' }, jail.bwrap ? {} : { level: 'error' }),
  });
  say(`vefaas     ${host.controlPlaneUrl} (sandboxes: ${host.isolation}), route ${host.gatewayUrl}`);

  const workers: ChildProcess[] = [];
  const redis = createRedis(redisHandle.url);
  const keys = createKeyspace(PREFIX);
  const queueConnection = redis.duplicate();
  const queue = new Queue<EpisodeJobData>('episodes', { connection: queueConnection, prefix: PREFIX });
  try {
    const runId = `demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const sweep = `${root}examples/sweep.jsonl`;
    const validated = policyDemo
      ? validateInputs(policyDemo.files, { runId, policyFile: policyDemo.policyFile })
      : validateInputs([{ path: sweep, text: await readFile(sweep, 'utf8') }], { runId });
    if (validated.problems.length > 0) throw new Error(`the examples are invalid: ${validated.problems[0]!.message}`);
    const expected = JSON.parse(await readFile(`${root}examples/expected.json`, 'utf8')) as Record<
      string,
      { resolved: boolean; note: string }
    >;
    const summary = await submitRun({ queue, redis, keys, runId, episodes: validated.episodes });
    say(
      `submitted  run ${runId}: ${summary.enqueued} episodes from ${policyDemo ? 'examples/policy/tasks.jsonl + --policy examples/policy/policy.json' : 'examples/sweep.jsonl'}`,
    );

    const env = {
      ...process.env,
      REDIS_URL: redisHandle.url,
      RF_PREFIX: PREFIX,
      RF_WORKER_CONCURRENCY: '3',
      VEFAAS_ENDPOINT: host.controlPlaneUrl,
      VEFAAS_FUNCTION_ROUTE: host.gatewayUrl,
      VEFAAS_FUNCTION_ID: host.functionId,
      VEFAAS_ACCESS_KEY: host.accessKeyId,
      VEFAAS_SECRET_KEY: host.secretAccessKey,
      // Retries are expected here (a timeout step, malformed calls are observations, not failures); keep the screen for results.
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
      ...policyDemo?.env,
    };
    for (let i = 0; i < WORKERS; i += 1) {
      workers.push(
        spawn(process.execPath, [`${root}bin/rollout-fleet.js`, 'worker'], {
          env,
          stdio: ['ignore', 'inherit', 'inherit'],
        }),
      );
    }
    say(`workers    ${WORKERS} processes (pids ${workers.map((w) => w.pid).join(', ')}), 3 episodes each at once\n`);

    const store = new ResultStore(redis, keys);
    const results: EpisodeResult[] = [];
    const progress = progressLine('episodes', { offTty: 'quiet' });
    const ticker = setInterval(() => {
      void getRunStatus({ redis, keys, runId }).then((s) => progress.update(s.done, s.total, `active ${s.active}`));
    }, 500);
    try {
      for await (const item of store.follow(runId, { until: async () => results.length >= summary.total })) {
        results.push(item.result);
        if (!process.stderr.isTTY) say(`  done ${item.result.instance_id}`);
      }
    } finally {
      clearInterval(ticker);
      progress.update(results.length, summary.total);
      progress.done();
    }

    const report = policyDemo?.report(results);
    const rows = report?.rows ?? [
      ['instance', 'resolved', 'expected', 'reward', 'steps', 'timeouts', 'errors', 'duration'],
    ];
    let mismatches = report?.mismatches ?? 0;
    for (const r of report ? [] : [...results].sort((a, b) => a.instance_id.localeCompare(b.instance_id))) {
      const want = expected[r.instance_id]?.resolved;
      const ok = r.status === 'completed' && r.resolved === want;
      if (!ok) mismatches += 1;
      rows.push([
        r.instance_id,
        r.status === 'failed' ? `failed (${r.failure?.code})` : String(r.resolved),
        `${String(want)}${ok ? '' : '  <-- MISMATCH'}`,
        String(r.reward ?? '-'),
        String(r.steps.length),
        String(r.steps.filter((s) => s.timed_out).length),
        String(r.steps.filter((s) => s.error && !s.timed_out).length),
        `${(r.timings.total_ms / 1000).toFixed(1)}s`,
      ]);
    }
    say(`\n${table(rows)}\n`);
    const resolved = results.filter((r) => r.resolved === true).length;
    const unresolved = results.filter((r) => r.resolved === false).length;
    const failed = results.filter((r) => r.status === 'failed').length;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    say(
      `summary    ${results.length} episodes: ${resolved} resolved, ${unresolved} unresolved, ${failed} failed; ${mismatches} unexpected — ${seconds}s`,
    );
    const expectedPath = policyDemo?.expectedPath ?? 'examples/expected.json';
    say(
      mismatches === 0
        ? `demo: every outcome matches ${expectedPath}`
        : `demo: some outcomes differ from ${expectedPath}`,
    );
    return mismatches === 0 ? EXIT.OK : EXIT.FAILURE;
  } finally {
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => (w.exitCode === null ? once(w, 'exit') : undefined)));
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    queueConnection.disconnect();
    // The prefix is new on every run: leave nothing of it behind (BullMQ's keys and ours).
    await deleteKeysMatching(redis, `${PREFIX}:*`);
    await deleteKeysMatching(redis, `rf:${PREFIX}:*`);
    redis.disconnect();
    await host.close();
    await policyDemo?.close();
    await redisHandle.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`demo: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = EXIT.FAILURE;
  },
);
