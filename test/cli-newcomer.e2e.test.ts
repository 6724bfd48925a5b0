/**
 * A newcomer's CLI (issue 16), through the real `rollout-fleet` child process against real Redis with a fresh
 * prefix: runs that cannot be misnamed, interrupted submits that tell the truth, and the small things (bad
 * cursors, `retry` without `--failed`, no library noise before our own Redis message, "no worker" warning,
 * "did you mean" for misspelled fields and tools).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { itWith } from '@rollout-fleet/test-kit/needs';
import {
  CLI,
  ROOT,
  SWEEP,
  childEnv,
  cloudEnvFor,
  collectResults,
  configOf,
  openPipeline,
  runCli,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Pipeline,
} from './support/pipeline-harness.js';

describe('rollout-fleet CLI for a newcomer', () => {
  let dir: string;
  let env: Record<string, string>;
  let pipeline: Pipeline;
  let firstLine: Record<string, unknown>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-newcomer-'));
    env = testEnv();
    pipeline = openPipeline(configOf(env));
    firstLine = JSON.parse((await readFile(SWEEP, 'utf8')).split('\n')[0]!) as Record<string, unknown>;
  });

  afterAll(async () => {
    await pipeline?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function file(name: string, lines: unknown[]): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
    return path;
  }

  it('refuses an unknown run everywhere (exit 3, the same words, the closest run ids) and creates nothing; a cancelled run shows no waiting and refuses submit until --resume', async () => {
    const submitted = await runCli(['submit', SWEEP, '--run', 'exp-42'], env);
    expect(submitted.code, submitted.stderr).toBe(0);
    const runsBefore = (await pipeline.redis.smembers(pipeline.keys.runs())).sort();
    expect(runsBefore).toEqual(['exp-42']);

    const typos = [
      ['status', '--run', 'exp-43'],
      ['results', '--run', 'exp-4'],
      ['results', '--run', 'exp-4', '--follow'],
      ['cancel', '--run', 'exp42'],
      ['retry', '--run', 'exp-42x', '--failed'],
      ['retry', '--run', 'exp-42x'],
    ];
    const answers = await Promise.all(typos.map((args) => runCli(args, env)));
    answers.forEach((answer, i) => {
      const [command, , runId] = typos[i]!;
      expect(answer.code, `${command}: ${answer.stderr}`).toBe(3);
      expect(answer.stdout).toBe('');
      expect(answer.stderr.split('\n')[0]).toBe(`${command}: no run "${runId}"; did you mean "exp-42"?`);
      expect(answer.stderr).toContain('RUN_NOT_FOUND');
    });
    for (const runId of ['exp-43', 'exp-4', 'exp42', 'exp-42x'])
      expect(await pipeline.redis.exists(pipeline.keys.run(runId))).toBe(0);
    expect((await pipeline.redis.smembers(pipeline.keys.runs())).sort()).toEqual(runsBefore);

    const cancelled = await runCli(['cancel', '--run', 'exp-42'], env);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const status = await runCli(['status', '--run', 'exp-42', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ cancelled: true, total: 6, done: 6, waiting: 0, notEnqueued: 0 });
    const text = await runCli(['status', '--run', 'exp-42'], env);
    expect(text.stdout).toMatch(/^run exp-42 \(cancelled\): 6\/6 done$/m);
    expect(text.stdout).toMatch(/^ {2}waiting 0 /m);

    // The dashboard (`rollout-fleet dashboard`) says so too: on the runs list, the run page and its JSON.
    const dashboard = spawn(process.execPath, [CLI, 'dashboard', '--port', '0'], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: ROOT,
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        dashboard.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const found = /^dashboard: (http:\/\/\S+)/m.exec(out);
          if (found) resolve(found[1]!);
        });
        dashboard.once('exit', (code) => reject(new Error(`dashboard exited ${String(code)}`)));
      });
      const list = await (await fetch(new URL('/runs', url))).text();
      expect(list).toContain('exp-42</a> <span class="bad">(cancelled)</span>');
      const runPage = await (await fetch(new URL('/runs/exp-42', url))).text();
      expect(runPage).toContain('<h1>Run exp-42 (cancelled)</h1>');
      expect(runPage).toContain('<tr><td>waiting</td><td>0</td></tr>');
      expect(runPage).not.toContain('http-equiv="refresh"');
      expect(await (await fetch(new URL('/api/runs/exp-42', url))).json()).toMatchObject({
        cancelled: true,
        waiting: 0,
      });
    } finally {
      await stopChild(dashboard);
    }

    // Into a cancelled run: refused, nothing enqueued, until --resume runs the cancelled episodes again.
    const refused = await runCli(['submit', SWEEP, '--run', 'exp-42'], env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /^submit: run exp-42 was cancelled; nothing was enqueued \(submit again with --resume to run it again\)$/m,
    );
    expect(await pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: 0 });
    const resumed = await runCli(['submit', SWEEP, '--run', 'exp-42', '--resume'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe(
      'run exp-42: 6 episode(s), 6 enqueued, 0 already done, 0 already queued (resumed: 6 cancelled episode(s) run again)',
    );
    expect(await pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: 6 });
    const after = JSON.parse((await runCli(['status', '--run', 'exp-42', '--json'], env)).stdout) as Record<
      string,
      unknown
    >;
    expect(after).toMatchObject({ cancelled: false, total: 6, done: 0, waiting: 6 });
  });

  it('Ctrl-C during a large submit: the progress stops, it says how many were enqueued and how to resume (exit 130); status shows the partial run; the same submit again finishes it', async () => {
    const total = 6000;
    const lines = Array.from({ length: total }, (_, i) => ({
      ...firstLine,
      episode_id: `big-${i}`,
      instance_id: `pyutils__big-${i}`,
    }));
    const big = await file('big.jsonl', lines);
    const child = spawn(process.execPath, [CLI, 'submit', big, '--run', 'big', '--chunk-size', '20'], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: ROOT,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const progressShown = new Promise<void>((resolve) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        if (/^enqueue: \d+\/6000 /m.test(stderr)) resolve();
      });
    });
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    await Promise.race([progressShown, exited]);
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code, stderr).toBe(130);
    expect(stdout).toBe('');
    const said =
      /^submit: interrupted: run big has ([\d,]+) of 6,000 episode\(s\) enqueued \(([\d,]+) by this submit\); run the same submit again to enqueue the rest/m.exec(
        stderr,
      );
    expect(said, stderr).not.toBeNull();
    const enqueued = Number(said![1]!.replace(/,/g, ''));
    expect(enqueued).toBeGreaterThanOrEqual(20);
    expect(enqueued).toBeLessThan(total);
    expect(Number(said![2]!.replace(/,/g, ''))).toBe(enqueued);
    // What it says is what Redis holds: that many jobs wait, the run's total is the whole file.
    expect(await pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: enqueued + 6 });

    const status = await runCli(['status', '--run', 'big'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^run big: 0\/6000 done$/m);
    expect(status.stdout).toContain(
      `  enqueued ${enqueued.toLocaleString('en-US')} of 6,000 — the submit was interrupted: submit the same files again to resume`,
    );
    expect(status.stdout).toMatch(new RegExp(`^ {2}waiting ${enqueued} `, 'm'));

    const again = await runCli(['submit', big, '--run', 'big', '--chunk-size', '500'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(
      `run big: 6000 episode(s), ${total - enqueued} enqueued, 0 already done, ${enqueued} already queued`,
    );
    const whole = await runCli(['status', '--run', 'big', '--json'], env);
    expect(JSON.parse(whole.stdout)).toMatchObject({ total: 6000, waiting: 6000, notEnqueued: 0, submitting: false });
  });

  it('bad cursors are input errors (exit 3) naming where the cursor came from; retry needs no --failed', async () => {
    const bogus = await runCli(['results', '--run', 'exp-42', '--after', 'bogus'], env);
    expect(bogus.code).toBe(3);
    expect(bogus.stderr.trim()).toBe(
      'results: --after: "bogus" is not a cursor; a cursor is a stream id such as 1721462400000-0 (or 0 for the start), as printed by an earlier read',
    );
    const checkpoint = join(dir, 'cursor');
    await writeFile(checkpoint, 'ERR wrong\n');
    const fromFile = await runCli(['results', '--run', 'exp-42', '--checkpoint', checkpoint], env);
    expect(fromFile.code).toBe(3);
    expect(fromFile.stderr).toContain(`results: the checkpoint file ${checkpoint}: "ERR wrong" is not a cursor`);
    const good = await runCli(['results', '--run', 'exp-42', '--after', '0'], env);
    expect(good.code, good.stderr).toBe(0);

    const retry = await runCli(['retry', '--run', 'exp-42'], env);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout.trim()).toBe('run exp-42: 0 failed episode(s) re-enqueued');
  });

  it("the README works as written: `npx rollout-fleet …` runs the repository's own bin (package.json), nothing downloaded", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ 'rollout-fleet': 'bin/rollout-fleet.js' });
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const usage = readme.slice(readme.indexOf('## Use it'), readme.indexOf('## ', readme.indexOf('## Use it') + 3));
    const commands = usage.split('\n').filter((line) => /^(\S+=\S+ )?(npx )?rollout-fleet /.test(line));
    expect(commands.length).toBeGreaterThan(10);
    expect(commands.filter((line) => !line.includes('npx rollout-fleet '))).toEqual([]);
    // --no-install: resolved from this clone or not at all, never fetched from the registry.
    const child = spawn('npx', ['--no-install', 'rollout-fleet', 'status', '--help'], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: ROOT,
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    expect(out).toMatch(/^Usage: rollout-fleet status \[options\]/);
  });

  it('an unreachable Redis: only our own message, never the library\'s "[ioredis] Unhandled error event" (status, submit, dashboard)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const down = { ...env, REDIS_URL: `redis://127.0.0.1:${port}` };
    const runs = await Promise.all([
      runCli(['status', '--run', 'x'], down),
      runCli(['submit', SWEEP, '--run', 'x'], down),
      runCli(['dashboard', '--port', '0'], down),
    ]);
    for (const [i, command] of ['status', 'submit', 'dashboard'].entries()) {
      const run = runs[i]!;
      expect(run.code, run.stderr).toBe(4);
      expect(run.stderr).not.toContain('ioredis');
      expect(run.stderr.split('\n')[0]).toBe(
        `${command}: cannot reach Redis at redis://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}); start one (redis-server) or set REDIS_URL`,
      );
    }
  });

  it('"did you mean" for a misspelled episode field and a misspelled tool; a far-off tool name still replays as an observation', async () => {
    const { sandbox, ...rest } = firstLine as { sandbox: unknown };
    const trajectory = (firstLine as { trajectory: Array<Record<string, unknown>> }).trajectory;
    const misspelled = await file('typos.jsonl', [
      { ...rest, sandbx: sandbox, episode_id: 'field-typo' },
      {
        ...firstLine,
        episode_id: 'tool-typo',
        trajectory: [...trajectory, { ...trajectory[0], name: 'str_replace_edtor' }],
      },
    ]);
    const refused = await runCli(['submit', misspelled, '--run', 'typos', '--dry-run'], env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(
      `${misspelled}:1: Unrecognized key: "sandbx" — did you mean "sandbox" (not "sandbx")?`,
    );
    expect(refused.stderr).toContain(
      `${misspelled}:2: trajectory[${trajectory.length}].name: unknown tool "str_replace_edtor" — did you mean "str_replace_editor"?`,
    );
    const farOff = await file('far-off.jsonl', [
      {
        ...firstLine,
        episode_id: 'far-off',
        trajectory: [...trajectory, { name: 'open_file', arguments: { path: 'x' } }],
      },
    ]);
    const accepted = await runCli(['submit', farOff, '--run', 'typos', '--dry-run'], env);
    expect(accepted.code, accepted.stderr).toBe(0);
  });

  it('with vefaas-local, submit (dry run too) names every missing image, where it is used and the closest one; nothing is enqueued', async () => {
    const lines = [
      { ...firstLine, episode_id: 'typo-1', sandbox: { image: 'pyutls' } },
      { ...firstLine, episode_id: 'typo-2', sandbox: { image: 'pyutls' } },
      { ...firstLine, episode_id: 'registry', sandbox: { image: 'registry.example/team/nothing-like-it:v2' } },
      { ...firstLine, episode_id: 'fine' },
    ];
    const images = await file('images.jsonl', lines);
    for (const extra of [['--dry-run'], []]) {
      const refused = await runCli(['submit', images, '--run', 'images', ...extra], env);
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(
        `${images}:1: sandbox.image: image "pyutls" does not exist (2 episode(s) use it); did you mean "pyutils"?`,
      );
      expect(refused.stderr).toContain(
        `${images}:3: sandbox.image: image "registry.example/team/nothing-like-it:v2" does not exist (1 episode(s) use it)\n`,
      );
      expect(refused.stderr).toMatch(
        /^submit: 2 sandbox image\(s\) not found by vefaas-local in .*examples\/images \("pyutls", "registry\.example\/team\/nothing-like-it:v2"\); .*nothing was enqueued$/m,
      );
    }
    expect(await pipeline.redis.exists(pipeline.keys.run('images'))).toBe(0);
  });

  itWith(
    [bwrapNeed()],
    'against veFaaS (vefaas-local as the cloud) a missing image fails at the first create as configuration, once; the SWE-bench summary counts it as an error instance',
    async () => {
      const host = await startHost();
      const cloud = { ...testEnv(), ...cloudEnvFor(host.handle) };
      const cloudPipeline = openPipeline(configOf(cloud));
      const worker = spawnWorker(cloud, ['--concurrency', '1']);
      try {
        const missing = await file('cloud-missing.jsonl', [
          {
            ...firstLine,
            episode_id: 'no-image',
            instance_id: 'pyutils__no-image',
            sandbox: { image: 'no-such-image' },
          },
        ]);
        const submitted = await runCli(['submit', missing, '--run', 'cloud'], cloud);
        expect(submitted.code, submitted.stderr).toBe(0);
        const [result] = await collectResults(cloudPipeline, 'cloud', 1);
        expect(result, worker.log()).toMatchObject({
          status: 'failed',
          reward: null,
          failure: { code: 'SANDBOX_IMAGE_UNAVAILABLE', class: 'input' },
        });
        expect(result!.attempts.map((a) => a.failure?.code)).toEqual(['SANDBOX_IMAGE_UNAVAILABLE']);

        const summaryPath = join(dir, 'summary.json');
        const report = await runCli(
          ['results', '--run', 'cloud', '--format', 'swebench', '--summary', summaryPath],
          cloud,
        );
        expect(report.code, report.stderr).toBe(0);
        expect(JSON.parse(report.stdout)).toEqual({});
        const summary = JSON.parse(await readFile(summaryPath, 'utf8')) as Record<string, unknown>;
        expect(summary).toMatchObject({
          total_instances: 1,
          error_instances: 1,
          empty_patch_instances: 0,
          error_ids: ['pyutils__no-image'],
          empty_patch_ids: [],
        });
      } finally {
        await stopChild(worker);
        await cloudPipeline.close();
        await host.close();
      }
    },
  );

  itWith([bwrapNeed()], 'status warns while no worker is alive, and stops warning once one reports', async () => {
    const lonely = await runCli(['status', '--run', 'exp-42'], env);
    expect(lonely.code).toBe(0);
    expect(lonely.stderr).toContain(
      'status: warning: no worker has reported recently (none alive on this Redis and prefix); 6 episode(s) wait for one — start one with `npx rollout-fleet worker`',
    );
    // A real worker of the same fleet (prefix) serving another queue: alive and reporting, but it takes none of
    // this run's jobs, so the run stays pending and only liveness decides the warning.
    const worker = spawnWorker({ ...env, RF_QUEUE: 'elsewhere' }, ['--concurrency', '1']);
    try {
      await vi.waitFor(
        async () => {
          const seen = await runCli(['status', '--run', 'exp-42'], env);
          expect(seen.code).toBe(0);
          expect(seen.stdout).toMatch(/^run exp-42: 0\/6 done$/m);
          expect(seen.stderr, worker.log()).toBe('');
        },
        { timeout: 30_000, interval: 1000 },
      );
    } finally {
      await stopChild(worker);
    }
  });
});
