/**
 * The `rollout-fleet` CLI as a user runs it (`node bin/rollout-fleet.js ...` child processes, a unique
 * RF_PREFIX): malformed inputs are rejected with exit 3, a message naming file:line and field, and nothing
 * in Redis; a valid submission prints its summary and is idempotent; `status` and `results` read a run a
 * real worker finished; every subcommand's `--help` works.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EpisodeResultSchema } from '@rollout-fleet/shared';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  CLI,
  ROOT,
  SWEEP,
  childEnv,
  collectResults,
  configOf,
  openPipeline,
  readExpected,
  runCli,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const RUN = 'cli-e2e';
const SUBCOMMANDS = [
  'submit',
  'status',
  'results',
  'cancel',
  'retry',
  'worker',
  'verify',
  'doctor',
  'render-images',
  'dashboard',
  'api',
  'sandbox-host',
];

describe('rollout-fleet CLI: submit, status, results', () => {
  let dir: string;
  let env: Record<string, string>;
  let pipeline: Pipeline;
  let host: Host | undefined;
  let worker: RunningWorker | undefined;
  let firstLine: Record<string, unknown>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-cli-'));
    env = testEnv();
    pipeline = openPipeline(configOf(env));
    firstLine = JSON.parse((await readFile(SWEEP, 'utf8')).split('\n')[0]!) as Record<string, unknown>;
  });

  afterAll(async () => {
    await worker?.close();
    await host?.close();
    await pipeline?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Every key of the test's prefix, except the queue's `meta` (written by this test's own Queue handle). */
  async function prefixKeys(): Promise<string[]> {
    const { prefix, name } = pipeline.config.queue;
    const keys = [...(await pipeline.redis.keys(`${prefix}:*`)), ...(await pipeline.redis.keys(`rf:${prefix}:*`))];
    return keys.filter((key) => key !== `${prefix}:${name}:meta`);
  }

  async function file(name: string, lines: unknown[]): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
    return path;
  }

  it('rejects malformed inputs with exit 3, names file:line and field, and enqueues nothing', async () => {
    const { trajectory } = firstLine as { trajectory: Array<Record<string, unknown>> };
    const badJson = await file('bad-json.jsonl', [firstLine, '{"episode_id": "x", oops}']);
    const missing = await file('missing-field.jsonl', [
      { ...firstLine, trajectory: [{ ...trajectory[0], name: undefined }] },
    ]);
    const dupA = await file('dup-a.jsonl', [firstLine]);
    const dupB = await file('dup-b.jsonl', [{ ...firstLine, sandbox: { image: 'python' } }]);
    const huge = 'x'.repeat(1100 * 1024);
    const oversized = await file('oversized.jsonl', [
      {
        ...firstLine,
        episode_id: 'big',
        trajectory: [{ name: 'execute_bash', arguments: { command: `echo ${huge}` } }],
      },
    ]);
    // Used to end with "Maximum call stack size exceeded" (exit 1): nesting is bounded and located instead.
    const deepJson = await file('deep.json', ['['.repeat(100_000) + ']'.repeat(100_000)]);
    const deepArguments = await file('deep-arguments.jsonl', [
      firstLine,
      JSON.stringify({ ...firstLine, episode_id: 'deep' }).replace(
        '"trajectory":[',
        `"trajectory":[{"name":"execute_bash","arguments":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}},`,
      ),
    ]);
    // An editor's Latin-1 (or a binary file) must not be read with replacement characters: refused, with its line.
    const latin1 = join(dir, 'latin1.jsonl');
    await writeFile(
      latin1,
      Buffer.concat([
        Buffer.from(`${JSON.stringify(firstLine)}\n{"episode_id": "caf`),
        Buffer.from([0xe9]),
        Buffer.from('"}\n'),
      ]),
    );
    const deepYaml = await file('deep.yaml', [
      'history:',
      ...Array.from({ length: 2_000 }, (_u, i) => `${' '.repeat(i + 2)}- `),
      `${' '.repeat(2_002)}x`,
    ]);

    const cases = [
      { args: [badJson], where: `${badJson}:2: `, what: /not valid JSON/ },
      { args: [missing], where: `${missing}:1: trajectory[0].name: `, what: /missing/ },
      {
        args: [dupA, dupB],
        where: `${dupB}:1: episode_id: `,
        what: new RegExp(`duplicate episode .*first at ${dupA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1`),
      },
      {
        args: [oversized],
        where: `${oversized}:1: `,
        what: /episode is \d+ bytes serialized, over the limit of 1048576/,
      },
      { args: [deepJson], where: `${deepJson}:1: `, what: /too deeply nested \(nested deeper than 128 levels\)/ },
      { args: [deepArguments], where: `${deepArguments}:2: `, what: /too deeply nested/ },
      { args: [latin1], where: `${latin1}:2: `, what: /not UTF-8 text \(byte 0xe9 at offset \d+ is not valid UTF-8\)/ },
      { args: [deepYaml], where: `${deepYaml}:129: `, what: /too deeply nested/ },
    ];
    const runs = await Promise.all(cases.map((c) => runCli(['submit', ...c.args, '--run', RUN], env)));
    runs.forEach((run, i) => {
      const c = cases[i]!;
      expect(run.code, run.stderr).toBe(3);
      const line = run.stderr.split('\n').find((l) => l.startsWith(c.where));
      expect(line, `stderr names ${c.where}:\n${run.stderr}`).toBeDefined();
      expect(line).toMatch(c.what);
      expect(line).toContain(' — ');
      expect(run.stderr).toMatch(/nothing was enqueued/);
      expect(run.stdout).toBe('');
    });
    expect(await prefixKeys()).toEqual([]);
    expect(await pipeline.redis.exists(pipeline.keys.run(RUN))).toBe(0);
  });

  it('announces a run for warm pools with --announce: nothing enqueued, the announcement recorded (a dry run leaves it)', async () => {
    const announced = await runCli(['submit', SWEEP, '--run', 'next-batch', '--announce'], env);
    // No worker runs yet: the announcement is recorded all the same (announce-warm-pool.e2e covers the warnings).
    expect(announced.stderr).toMatch(/^submit: warning: no worker is running: the announcement waits for one/);
    expect(announced.code).toBe(0);
    expect(announced.stdout).toMatch(
      /^run next-batch: announced 6 sandbox\(es\) of \d+ kind\(s\) for warm pools; nothing enqueued$/m,
    );
    const keys = pipeline.keys;
    const counts = Object.values(await pipeline.redis.hgetall(keys.announced('next-batch'))).map(Number);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(6);
    expect(await pipeline.redis.sismember(keys.announcedRuns(), 'next-batch')).toBe(1);
    expect(await pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
    const submitted = await runCli(['submit', SWEEP, '--run', 'next-batch', '--dry-run'], env);
    expect(submitted.code).toBe(0);
    expect(await pipeline.redis.exists(keys.announced('next-batch'))).toBe(1);
  });

  it('submits the sweep with a summary line, and a resubmission enqueues 0', async () => {
    const submitted = await runCli(['submit', SWEEP, '--run', RUN], env);
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(submitted.stdout.trim()).toBe(`run ${RUN}: 6 episode(s), 6 enqueued, 0 already done, 0 already queued`);
    expect(await pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: 6 });

    const queuedAgain = await runCli(['submit', SWEEP, '--run', RUN], env);
    expect(queuedAgain.code, queuedAgain.stderr).toBe(0);
    expect(queuedAgain.stdout.trim()).toBe(`run ${RUN}: 6 episode(s), 0 enqueued, 0 already done, 6 already queued`);
    expect(await pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: 6 });
  });

  itWith(
    [bwrapNeed()],
    'shows status and results of the run once a worker finished it; resubmitting then enqueues 0',
    async () => {
      host = await startHost();
      worker = await startWorker({
        config: pipeline.config,
        target: host.target,
        logger: silentLogger,
        concurrency: 3,
      });
      const finished = await collectResults(pipeline, RUN, 6);
      expect(finished).toHaveLength(6);

      const [doneAgain, status, statusJson, results] = await Promise.all([
        runCli(['submit', SWEEP, '--run', RUN], env),
        runCli(['status', '--run', RUN], env),
        runCli(['status', '--run', RUN, '--json'], env),
        runCli(['results', '--run', RUN, '--format', 'jsonl'], env),
      ]);
      expect(doneAgain.code, doneAgain.stderr).toBe(0);
      expect(doneAgain.stdout.trim()).toBe(`run ${RUN}: 6 episode(s), 0 enqueued, 6 already done, 0 already queued`);

      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`run ${RUN}: 6/6 done`);
      expect(status.stdout).toMatch(/completed 6 {2}failed 0/);
      expect(status.stdout).toMatch(/resolved 3 \(50\.0%\)/);
      expect(statusJson.code, statusJson.stderr).toBe(0);
      expect(JSON.parse(statusJson.stdout)).toMatchObject({
        runId: RUN,
        exists: true,
        total: 6,
        done: 6,
        completed: 6,
        failed: 0,
        resolved: 3,
        duplicates: 0,
        active: 0,
      });

      expect(results.code, results.stderr).toBe(0);
      const lines = results.stdout
        .trim()
        .split('\n')
        .map((l) => EpisodeResultSchema.parse(JSON.parse(l)));
      expect(lines.map((r) => r.episode_id)).toEqual(finished.map((r) => r.episode_id));
      const expected = await readExpected();
      for (const r of lines) expect(r.resolved, r.instance_id).toBe(expected[r.instance_id]?.resolved);
      expect(results.stderr).toMatch(/^cursor \d+-\d+$/m);

      const unknown = await runCli(['status', '--run', 'no-such-run'], env);
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toContain('no run "no-such-run"');
    },
  );

  it('answers --help for every subcommand with exit 0', async () => {
    const runs = await Promise.all(SUBCOMMANDS.map((name) => runCli([name, '--help'], env)));
    runs.forEach((run, i) => {
      expect(run.code, `${SUBCOMMANDS[i]} --help: ${run.stderr}`).toBe(0);
      expect(run.stdout).toContain(`Usage: rollout-fleet ${SUBCOMMANDS[i]}`);
    });
    const top = await runCli(['--help'], env);
    expect(top.code).toBe(0);
    for (const name of SUBCOMMANDS) expect(top.stdout).toContain(name);
  });

  it('stops quietly with exit 0 when its reader has closed the pipe (`rollout-fleet results --help | head`)', async () => {
    const runs = await Promise.all(
      ['results', 'worker', 'doctor'].map(async (name) => {
        const child = spawn(process.execPath, [CLI, name, '--help'], {
          env: childEnv(env),
          stdio: ['ignore', 'pipe', 'pipe'],
          cwd: ROOT,
        });
        // The reader is gone before the first byte: every write the command makes meets EPIPE.
        child.stdout.destroy();
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const [code] = (await once(child, 'exit')) as [number | null];
        return { name, code, stderr };
      }),
    );
    for (const run of runs) {
      expect(run.stderr, run.name).not.toContain('EPIPE');
      expect(run.code, `${run.name}: ${run.stderr}`).toBe(0);
    }
  });
});
