/**
 * One true result per episode, as a user sees it (issue #9 items 5–7), on the real pipeline (vefaas-local
 * bubblewrap sandboxes, Redis, the real worker, the `rollout-fleet` CLI as child processes):
 * - `submit --force` of a finished run: `results` prints one line per episode (from the start and from a
 *   cursor), `--format swebench` one entry per instance, the forced result carries the earlier attempts;
 * - `cancel` stops a running episode within seconds (sandbox killed, failed, CANCELLED, reward null), writes
 *   CANCELLED results for queued ones so `status` reaches its total, and `retry --failed` says it resumes;
 * - Bull Board's retry (the request its button sends) really re-runs a finished job, whose new result
 *   replaces the old one;
 * - a worker whose job lock cannot be renewed stops the attempt and kills its sandbox.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EpisodeResultSchema, jobIdFor, type Episode, type EpisodeResult } from '@rollout-fleet/shared';
import { cancelRun, retryFailed, submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { startDashboard } from '@rollout-fleet/api/dashboard';
import {
  SWEEP,
  cloudEnvFor,
  collectResults,
  configOf,
  fleetSandboxes,
  openPipeline,
  readSweep,
  resultsOf,
  runCli,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const bash = (command: string, timeout_s?: number): Episode['trajectory'][number] => ({
  name: 'execute_bash',
  arguments: { command },
  ...(timeout_s === undefined ? {} : { timeout_s }),
});

describe('one true result per episode', () => {
  let host: Host;
  let sweep: Episode[];
  let dir: string;
  let pipeline: Pipeline | undefined;
  let workers: RunningWorker[] = [];

  beforeAll(async () => {
    host = await startHost();
    dir = await mkdtemp(join(tmpdir(), 'rf-outcome-'));
    sweep = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: 'template' }).episodes;
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => w.close()));
    workers = [];
    if (pipeline) {
      const config = pipeline.config;
      await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]), {
        timeout: 15_000,
        interval: 100,
      });
      await pipeline.close();
    }
    pipeline = undefined;
  });
  afterAll(async () => {
    await host?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const pick = (id: string): Episode => sweep.find((e) => e.episode_id === id) as Episode;

  async function open(env: Record<string, string> = {}): Promise<{ pipeline: Pipeline; env: Record<string, string> }> {
    const full = testEnv({ RF_BACKOFF_MS: '100', RF_CANCEL_POLL_MS: '200', ...env });
    pipeline = openPipeline(configOf(full));
    return { pipeline, env: full };
  }

  async function worker(p: Pipeline, concurrency = 2): Promise<RunningWorker> {
    const w = await startWorker({ config: p.config, target: host.target, logger: silentLogger, concurrency });
    workers.push(w);
    return w;
  }

  const lines = (stdout: string): EpisodeResult[] =>
    stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => EpisodeResultSchema.parse(JSON.parse(l)));

  it('submit --force of a finished run: one line per episode for every reader; the history stays in the result', async () => {
    const { pipeline: p, env } = await open();
    const cli = { ...env, ...cloudEnvFor(host.handle) };
    const file = join(dir, 'two.jsonl');
    const two = ['pyutils__calc-add', 'pyutils__text-reverse'].map((id) => ({ ...pick(id), run_id: 'forced' }));
    await writeFile(file, `${two.map((e) => JSON.stringify(e)).join('\n')}\n`);
    await worker(p);

    expect((await runCli(['submit', file, '--run', 'forced'], cli)).code).toBe(0);
    await collectResults(p, 'forced', 2);
    const first = await runCli(['results', '--run', 'forced'], cli);
    expect(lines(first.stdout)).toHaveLength(2);
    const cursor = /cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();

    expect((await runCli(['submit', file, '--run', 'forced', '--force'], cli)).code).toBe(0);
    await vi.waitFor(
      async () => {
        const [done, total] = await p.redis.hmget(p.keys.run('forced'), 'done', 'total');
        expect([done, total]).toEqual(['2', '2']);
        expect((await resultsOf(p, 'forced')).every((r) => r.attempts.length === 2)).toBe(true);
      },
      { timeout: 60_000, interval: 200 },
    );

    const again = lines((await runCli(['results', '--run', 'forced'], cli)).stdout);
    expect(again.map((r) => r.episode_id).sort()).toEqual(['pyutils__calc-add', 'pyutils__text-reverse']);
    for (const r of again) expect(r.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    // A reader that had read everything gets exactly the two replacements after its cursor.
    expect(lines((await runCli(['results', '--run', 'forced', '--after', cursor!], cli)).stdout)).toHaveLength(2);
    const report = JSON.parse(
      (await runCli(['results', '--run', 'forced', '--format', 'swebench'], cli)).stdout,
    ) as Record<string, unknown>;
    expect(Object.keys(report).sort()).toEqual(['pyutils__calc-add', 'pyutils__text-reverse']);
    expect(await p.redis.xlen(p.keys.results('forced'))).toBe(2);
  });

  it('cancel stops a running episode within seconds (sandbox killed, CANCELLED) and settles queued ones; retry --failed resumes', async () => {
    const { pipeline: p, env } = await open();
    const cli = { ...env, ...cloudEnvFor(host.handle) };
    const long = {
      ...pick('pyutils__calc-add'),
      run_id: 'cancel',
      episode_id: 'long',
      trajectory: [bash('sleep 60', 90)],
    };
    const queued = ['pyutils__calc-add', 'pyutils__text-reverse'].map((id) => ({ ...pick(id), run_id: 'cancel' }));
    await submitRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId: 'cancel', episodes: [long, ...queued] });
    await worker(p, 1);
    // The long episode is running: its sandbox exists.
    await vi.waitFor(async () => expect(await fleetSandboxes(host, p.config)).not.toEqual([]), {
      timeout: 30_000,
      interval: 100,
    });
    const cancelledAt = Date.now();
    const cancel = await runCli(['cancel', '--run', 'cancel'], cli);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toContain('retry --run cancel --failed');
    const results = await collectResults(p, 'cancel', 3);
    expect(Date.now() - cancelledAt).toBeLessThan(15_000);
    for (const r of results)
      expect(r).toMatchObject({
        status: 'failed',
        reward: null,
        resolved: null,
        failure: { code: 'CANCELLED', class: 'input' },
      });
    await vi.waitFor(async () => expect(await fleetSandboxes(host, p.config)).toEqual([]), {
      timeout: 10_000,
      interval: 100,
    });
    const status = JSON.parse((await runCli(['status', '--run', 'cancel', '--json'], cli)).stdout) as {
      done: number;
      total: number;
      cancelled: boolean;
    };
    expect(status).toMatchObject({ done: 3, total: 3, cancelled: true });

    const retry = await runCli(['retry', '--run', 'cancel', '--failed'], cli);
    expect(retry.code).toBe(0);
    expect(retry.stdout).toContain(
      'run cancel was cancelled: resuming it; 3 failed episode(s) re-enqueued (3 of them cancelled)',
    );
    await vi.waitFor(
      async () => {
        const byId = new Map((await resultsOf(p, 'cancel')).map((r) => [r.episode_id, r]));
        expect(byId.get('pyutils__calc-add')).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
        expect(byId.get('pyutils__text-reverse')).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
      },
      { timeout: 120_000, interval: 250 },
    );
    // The long one runs again; stop it so the test ends (and check cancel's producer side directly).
    expect(await cancelRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId: 'cancel' })).toMatchObject({
      removed: 0,
    });
  });

  it("Bull Board's retry button re-runs a finished job; its new result replaces the old one", async () => {
    const { pipeline: p } = await open({ RF_ATTEMPTS: '1' });
    const broken = {
      ...pick('pyutils__calc-add'),
      run_id: 'board',
      episode_id: 'broken',
      sandbox: { ...pick('pyutils__calc-add').sandbox, image: 'no-such-image' },
    };
    await submitRun({
      queue: p.queue,
      redis: p.redis,
      keys: p.keys,
      runId: 'board',
      episodes: [broken],
      policy: { attempts: 1, backoffMs: 100, retentionS: 3600 },
    });
    await worker(p);
    const [failed] = await collectResults(p, 'board', 1);
    expect(failed).toMatchObject({ status: 'failed', attempts: [{ attempt: 1 }] });
    const dashboard = await startDashboard({
      config: p.config,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      redis: p.redis,
    });
    try {
      const jobId = jobIdFor('board', 'broken', 0);
      const origin = dashboard.url.replace(/\/$/, '');
      // What the button sends (with the Origin a browser adds to a write).
      const response = await fetch(`${origin}/api/queues/${p.config.queue.name}/${encodeURIComponent(jobId)}/retry`, {
        method: 'PUT',
        headers: { origin },
      });
      expect(response.status).toBe(204);
      await vi.waitFor(async () => expect((await p.store.get('board', 'broken', 0))?.attempts).toHaveLength(2), {
        timeout: 60_000,
        interval: 200,
      });
    } finally {
      await dashboard.close();
    }
    expect(await p.redis.xlen(p.keys.results('board'))).toBe(1);
    expect(await p.redis.hmget(p.keys.run('board'), 'done', 'failed')).toEqual(['1', '1']);
  });

  it('a step that prints 5 MB: the answer is cut while read, the step keeps head + marker + tail with its true size', async () => {
    // The answer is cut at 256 KiB while read; the step keeps at most its own limit, 64 KiB here.
    const { pipeline: p } = await open({
      RF_SWEREX_MAX_RESPONSE_BYTES: String(256 * 1024),
      RF_STEP_OUTPUT_LIMIT_BYTES: String(64 * 1024),
    });
    const flood = {
      ...pick('pyutils__calc-add'),
      run_id: 'flood',
      episode_id: 'flood',
      trajectory: [bash("head -c 5000000 /dev/zero | tr '\\0' x; echo END", 120)],
    };
    await submitRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId: 'flood', episodes: [flood] });
    await worker(p, 1);
    const [result] = await collectResults(p, 'flood', 1);
    const step = result?.steps[0];
    expect(step).toMatchObject({ truncated: true, output_bytes: 5_000_004, exit_code: 0 });
    expect(step?.output.startsWith('xxxx')).toBe(true);
    expect(step?.output.endsWith('xxxxEND\n')).toBe(true);
    expect(step?.output).toContain('[... output truncated: 5000004 bytes in total, ');
    expect(Buffer.byteLength(step?.output ?? '')).toBeLessThan(70 * 1024);
  });

  it('a worker whose job lock renewal fails stops the attempt and kills its sandbox; the job still ends with one result', async () => {
    const { pipeline: p } = await open({ RF_LOCK_DURATION_MS: '2000', RF_STALLED_INTERVAL_MS: '1000' });
    const slow = {
      ...pick('pyutils__calc-add'),
      run_id: 'lock',
      episode_id: 'slow',
      trajectory: [bash('sleep 8', 30)],
    };
    await submitRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId: 'lock', episodes: [slow] });
    await worker(p, 1);
    let first: string | undefined;
    await vi.waitFor(
      async () => {
        first = (await fleetSandboxes(host, p.config)).find((s) => s.status === 'Ready')?.id;
        expect(first).toBeDefined();
      },
      { timeout: 30_000, interval: 100 },
    );
    // Another party takes the lock away (as after a long event-loop stall): renewal fails on the next beat.
    const lostAt = Date.now();
    await p.redis.del(`${p.config.queue.prefix}:${p.config.queue.name}:${jobIdFor('lock', 'slow', 0)}:lock`);
    await vi.waitFor(async () => expect((await fleetSandboxes(host, p.config)).map((s) => s.id)).not.toContain(first), {
      timeout: 6000,
      interval: 100,
    });
    // Stopped long before the 8 s step would have ended.
    expect(Date.now() - lostAt).toBeLessThan(6000);
    const [result] = await collectResults(p, 'lock', 1);
    expect(result).toMatchObject({ status: 'completed' });
    expect(result?.sandbox_id).not.toBe(first);
    expect(await p.redis.xlen(p.keys.results('lock'))).toBe(1);
    expect((await retryFailed({ queue: p.queue, redis: p.redis, keys: p.keys, runId: 'lock' })).retried).toBe(0);
  });
});
