/**
 * The dashboard in a real browser (Debian's /usr/bin/chromium driven by playwright-core; never a
 * downloaded browser): log in with basic auth, see the episode queue's completed and failed counts of a
 * small real run, open a job, read its step progress and logs. Writes artifacts/dashboard.png.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, jobIdFor, jobNameFor, loadConfig, type Config } from '@rollout-fleet/shared';
import { formatStepLog, startDashboard, stepProgress, type Dashboard } from '@rollout-fleet/worker';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACT = fileURLToPath(new URL('../artifacts/dashboard.png', import.meta.url));
const USER = 'operator';
const PASSWORD = `pw-${randomUUID()}`;

interface SmallRun {
  runId: string;
  completed: string[];
  failed: string[];
  steps: number;
}

/**
 * Produces a small real run in the configured queue: episodes that each replay a few steps (progress +
 * one log line per step), some completing and some failing. Today a BullMQ Worker stands in for the
 * episode pipeline; this is the one place to swap in the real worker.
 */
async function produceSmallRun(config: Config): Promise<SmallRun> {
  const runId = `run-${randomUUID().slice(0, 8)}`;
  const steps = 3;
  const episodes = [0, 1, 2, 3, 4].map((i) => ({ episodeId: `e${i}`, instanceId: `astropy__astropy-${1000 + i}`, fails: i % 2 === 1 }));
  const connection = { url: config.redis.url };
  const queue = new Queue(config.queue.name, { connection, prefix: config.queue.prefix });
  const run: SmallRun = { runId, completed: [], failed: [], steps };
  const finished = new Promise<void>((resolve) => {
    const worker = new Worker(
      config.queue.name,
      async (job) => {
        const { fails } = job.data as { fails: boolean };
        for (let index = 0; index < steps; index++) {
          await job.updateProgress(stepProgress(index + 1, steps));
          await job.log(formatStepLog({ index, tool: index === 0 ? 'str_replace_editor' : 'bash', exit_code: fails && index === steps - 1 ? 1 : 0, duration_ms: 40 + index, timed_out: false }, steps));
        }
        if (fails) throw new Error('SANDBOX_DEAD: the sandbox instance is gone');
        return { status: 'completed' };
      },
      { connection, prefix: config.queue.prefix, concurrency: 5 },
    );
    const settle = (): void => {
      if (run.completed.length + run.failed.length === episodes.length) void worker.close().then(resolve);
    };
    worker.on('completed', (job) => {
      run.completed.push(job.id as string);
      settle();
    });
    worker.on('failed', (job) => {
      run.failed.push(job?.id as string);
      settle();
    });
  });
  await queue.addBulk(
    episodes.map((e) => ({
      name: jobNameFor(e.instanceId, 0),
      data: { fails: e.fails },
      opts: { jobId: jobIdFor(runId, e.episodeId, 0), attempts: 1 },
    })),
  );
  await finished;
  await queue.close();
  return run;
}

describe('dashboard in a browser', () => {
  let config: Config;
  let dashboard: Dashboard;
  let context: BrowserContext;
  let profileDir: string;
  let run: SmallRun;

  beforeAll(async () => {
    config = loadConfig(
      { REDIS_URL, RF_PREFIX: `{rf-e2e-${randomUUID()}}`, RF_DASHBOARD_USER: USER, RF_DASHBOARD_PASSWORD: PASSWORD },
      { dotenvPath: false },
    );
    run = await produceSmallRun(config);
    dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: createLogger({ level: 'warn', format: 'json' }) });
    profileDir = await mkdtemp(join(tmpdir(), 'rf-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      httpCredentials: { username: USER, password: PASSWORD },
      viewport: { width: 1280, height: 800 },
    });
  });

  afterAll(async () => {
    await context?.close();
    if (profileDir) await rm(profileDir, { recursive: true, force: true });
    await dashboard?.close();
    const queue = new Queue(config.queue.name, { connection: { url: REDIS_URL }, prefix: config.queue.prefix });
    await queue.obliterate({ force: true });
    await queue.close();
    const redis = new Redis(REDIS_URL);
    const leftovers = await redis.keys(`rf:${config.queue.prefix}:*`);
    if (leftovers.length > 0) await redis.del(...leftovers);
    redis.disconnect();
  });

  it('logs in, shows the run’s completed and failed counts, and a job’s step progress and logs', async () => {
    expect(run.completed).toHaveLength(3);
    expect(run.failed).toHaveLength(2);
    const page = context.pages()[0] ?? (await context.newPage());

    const home = await page.goto(dashboard.url);
    expect(home?.status()).toBe(200);
    await page.getByRole('link', { name: config.queue.name, exact: true }).first().click();
    const badge = (status: string): ReturnType<typeof page.locator> =>
      page.locator(`a[href="/queue/${config.queue.name}?status=${status}"] [class*="badge"]`);
    await badge('completed').waitFor();
    expect(await badge('completed').textContent()).toBe(String(run.completed.length));
    expect(await badge('failed').textContent()).toBe(String(run.failed.length));

    // Open one failed job from the failed list.
    await page.locator(`a[href="/queue/${config.queue.name}?status=failed"]`).click();
    const failedId = run.failed[0] as string;
    await page.getByText(failedId, { exact: true }).first().click();
    await page.waitForURL((url) => decodeURIComponent(url.pathname) === `/queue/${config.queue.name}/${failedId}`);
    await page.getByText(/^astropy__astropy-\d+#0$/).first().waitFor();

    await page.getByRole('tab', { name: 'Progress' }).click();
    await page.getByText(`step ${run.steps}/${run.steps}`).first().waitFor();

    await page.getByRole('tab', { name: 'Logs' }).click();
    await page.getByText(`step 1/${run.steps} str_replace_editor exit=0 0.04s`).waitFor();
    await page.getByText(`step ${run.steps}/${run.steps} bash exit=1 0.04s`).waitFor();

    await mkdir(join(ARTIFACT, '..'), { recursive: true });
    await page.screenshot({ path: ARTIFACT, fullPage: true });
  });
});
