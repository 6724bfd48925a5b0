/**
 * `submit --announce` and the API's `announce` say when an announcement cannot pre-warm anything (real Redis on a
 * fresh prefix per case, `rollout-fleet` as a child process, the API over loopback, in-process workers on an
 * emulated vefaas-local): with no worker alive, "no worker is running"; with live workers that all run without a
 * warm pool (RF_WARM_POOL_MAX=0, the default), "none … keeps a warm pool"; with a warm pool, no warning, and the
 * pool fills for the announcement. The announcement is recorded and the exit code is 0 in every case.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config } from '@rollout-fleet/shared';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { startTestApi, type TestApi } from './support/api-harness.js';
import {
  SWEEP,
  configOf,
  openPipeline,
  runCli,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const NO_WORKER = 'submit: warning: no worker is running: the announcement waits for one';
const NO_WARM_POOL =
  'submit: warning: none of the 1 live worker(s) keeps a warm pool (RF_WARM_POOL_MAX=0): nothing will be pre-warmed; set RF_WARM_POOL_MAX on the workers';

interface AnnounceBody {
  announced: {
    specs: number;
    sandboxes: number;
    live_workers: number;
    warm_pool_workers: number;
    warm_pool_max: number;
    warning?: string;
  };
}

describe('announcing when nothing will pre-warm it', () => {
  let host: Host;
  let records: Array<Record<string, unknown>>;
  const open: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
    records = (await readFile(SWEEP, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  });
  afterEach(async () => {
    // Workers first (they kill their warm sandboxes), then the API, then the test's handles (which delete the prefix).
    for (const o of open.splice(0).reverse()) await o.close();
  });
  afterAll(async () => {
    await host?.close();
  });

  /** One case's fleet: its environment (a fresh prefix), the test's Redis handles and an API on that prefix. */
  async function fleet(): Promise<{ env: Record<string, string>; config: Config; pipeline: Pipeline; api: TestApi }> {
    const env = testEnv();
    const config = configOf(env);
    const pipeline = openPipeline(config);
    const api = await startTestApi({ env: { RF_PREFIX: env.RF_PREFIX! }, host });
    open.push(pipeline, api);
    return { env, config, pipeline, api };
  }

  /** A worker of this fleet, once producers can see it (its first metrics snapshot, its heartbeat). */
  async function worker(
    f: { env: Record<string, string>; pipeline: Pipeline },
    extra: Record<string, string>,
  ): Promise<RunningWorker> {
    const config = configOf({ ...f.env, ...extra });
    const running = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 1 });
    open.push(running);
    const { redis, keys } = f.pipeline;
    await vi.waitFor(
      async () => {
        expect(await redis.hexists(keys.metrics(), running.workerId)).toBe(1);
        expect(await redis.exists(keys.workerAlive(running.workerId))).toBe(1);
      },
      { timeout: 15_000, interval: 50 },
    );
    return running;
  }

  async function announceOverApi(api: TestApi, runId: string): Promise<AnnounceBody['announced']> {
    const res = await api.call('/v1/runs', {
      method: 'POST',
      json: { run_id: runId, episodes: records, announce: true },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return ((await res.json()) as AnnounceBody).announced;
  }

  it('no worker alive: announces, and says the announcement waits for one', async () => {
    const f = await fleet();
    const run = await runCli(['submit', SWEEP, '--run', 'next-cli', '--announce'], f.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^run next-cli: announced 6 sandbox\(es\) of \d+ kind\(s\) for warm pools; nothing enqueued$/m,
    );
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining(NO_WORKER)]);
    expect(await f.pipeline.redis.sismember(f.pipeline.keys.announcedRuns(), 'next-cli')).toBe(1);

    const announced = await announceOverApi(f.api, 'next-api');
    expect(announced).toMatchObject({ sandboxes: 6, live_workers: 0, warm_pool_workers: 0, warm_pool_max: 0 });
    expect(announced.warning).toMatch(/^no worker is running: the announcement waits for one/);
    expect(await f.pipeline.redis.sismember(f.pipeline.keys.announcedRuns(), 'next-api')).toBe(1);
  });

  it('live workers without a warm pool (RF_WARM_POOL_MAX=0, the default): announces, and says nothing will be pre-warmed', async () => {
    const f = await fleet();
    await worker(f, {});
    const run = await runCli(['submit', SWEEP, '--run', 'next-cli', '--announce'], f.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.trim().split('\n')).toEqual([NO_WARM_POOL]);
    expect(await f.pipeline.redis.sismember(f.pipeline.keys.announcedRuns(), 'next-cli')).toBe(1);

    const announced = await announceOverApi(f.api, 'next-api');
    expect(announced).toMatchObject({ sandboxes: 6, live_workers: 1, warm_pool_workers: 0, warm_pool_max: 0 });
    expect(announced.warning).toBe(NO_WARM_POOL.replace('submit: warning: ', ''));
  });

  it('a live worker with a warm pool: no warning, and the pool fills for the announcement', async () => {
    const f = await fleet();
    const warm = await worker(f, { RF_WARM_POOL_MAX: '2', RF_WARM_INTERVAL_MS: '100' });
    // A second worker without a pool changes nothing: one that fills is enough.
    await worker(f, {});
    const run = await runCli(['submit', SWEEP, '--run', 'next-cli', '--announce'], f.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    await vi.waitFor(() => expect(warm.warmPool.offered).toBe(2), { timeout: 30_000, interval: 50 });

    const announced = await announceOverApi(f.api, 'next-api');
    expect(announced).toMatchObject({ sandboxes: 6, live_workers: 2, warm_pool_workers: 1, warm_pool_max: 2 });
    expect(announced).not.toHaveProperty('warning');
  });
});
