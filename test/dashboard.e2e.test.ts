/**
 * The dashboard in a real browser (Debian's /usr/bin/chromium driven by playwright-core; never a
 * downloaded browser) over a small REAL run: vefaas-local with bubblewrap sandboxes, the producer's
 * submitRun, the real worker (startWorker) in this process. Logs in with basic auth, sees the episode
 * queue's completed and failed counts, opens a completed job and reads its step progress and logs; checks
 * /metrics (aggregated from the worker's own Redis snapshot), /api/runs/<id> and the run page.
 * Opens the episode viewer from the run page and from Bull Board's job view: steps with replayed and recorded
 * observations, the diff of the one that differs, patch, grading and attempts.
 * Writes artifacts/dashboard.png, artifacts/dashboard-run.png and artifacts/dashboard-episode.png.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import {
  ResultStore,
  createKeyspace,
  createLogger,
  createRedis,
  findOnPath,
  jobIdFor,
  loadConfig,
  type Config,
  type Episode,
  type EpisodeJobData,
  type EpisodeResult,
  type Logger,
  type RunStatus,
} from '@rollout-fleet/shared';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { commandNeed, describeWith } from '@rollout-fleet/test-kit/needs';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createVefaasClient, type VefaasClient } from '@rollout-fleet/sandbox';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { formatGradingLog, formatStepLog, startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { startDashboard, type Dashboard } from '@rollout-fleet/api/dashboard';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Debian's chromium, found on PATH (never a downloaded browser).
const CHROMIUM = findOnPath('chromium') ?? 'chromium';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ARTIFACT = join(ROOT, 'artifacts/dashboard.png');
const RUN_ARTIFACT = join(ROOT, 'artifacts/dashboard-run.png');
const EPISODE_ARTIFACT = join(ROOT, 'artifacts/dashboard-episode.png');
/**
 * RESOLVES' first step (view of calc.py) as if recorded from a checkout where line 3 already read `a + b`: the one
 * recorded observation that differs. The `cat -n` block of tools.md §3.4: numbers in width 6, a tab, the line.
 */
const CALC_LINES = [
  'def add(a, b):',
  '    """Return the sum of a and b."""',
  '    return a + b',
  '',
  '',
  'def mul(a, b):',
  '    """Return the product of a and b."""',
  '    return a * b',
  '',
];
const RECORDED_VIEW = `Here's the result of running \`cat -n\` on /testbed/pyutils/calc.py:\n${CALC_LINES.map((line, i) => `${String(i + 1).padStart(6)}\t${line}`).join('\n')}\n`;
const USER = 'operator';
const PASSWORD = `pw-${randomUUID()}`;
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
/** From examples/sweep.jsonl: one episode that resolves (3 steps), one that completes unresolved (2 steps). */
const RESOLVES = 'pyutils__calc-add';
const UNRESOLVED = 'pyutils__text-reverse';
/** A copy of RESOLVES whose image does not exist: the sandbox never starts (a configuration error, never retried); one attempt. */
const NO_IMAGE = 'pyutils__no-such-image';
/** A sandbox env value (a token a trainer passes into its sandboxes): the dashboard must never show it. */
const ENV_SECRET = `sk-env-${randomUUID()}`;

interface SmallRun {
  runId: string;
  /** Job ids, as the worker reported them. */
  completed: string[];
  failed: string[];
  /** Stored results by instance id. */
  results: Map<string, EpisodeResult>;
}

/** What the small run started; closed in afterAll. */
interface Fleet {
  host: VefaasLocalHandle;
  vefaas: VefaasClient;
  worker: RunningWorker;
}

/** Two example episodes as they are, plus one pointing at a missing image. */
async function smallRunEpisodes(runId: string): Promise<Episode[]> {
  const path = join(ROOT, 'examples/sweep.jsonl');
  const records = (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const pick = (id: string): Record<string, unknown> => records.find((r) => r['episode_id'] === id) ?? {};
  const withEnv = (record: Record<string, unknown>): Record<string, unknown> => ({
    ...record,
    sandbox: {
      ...(record['sandbox'] as Record<string, unknown>),
      env: { API_TOKEN: ENV_SECRET, PIP_PROGRESS_BAR: 'off' },
    },
  });
  const broken = withEnv({
    ...pick(RESOLVES),
    episode_id: NO_IMAGE,
    instance_id: NO_IMAGE,
    sandbox: { image: 'no-such-image' },
  });
  // Recorded observations for RESOLVES: step 0 differs (see RECORDED_VIEW), step 1 has none, step 2 matches.
  const resolves = pick(RESOLVES);
  const steps = resolves['trajectory'] as Array<Record<string, unknown>>;
  const recorded = {
    ...resolves,
    trajectory: [{ ...steps[0], observation: RECORDED_VIEW }, steps[1], { ...steps[2], observation: '5\n' }],
  };
  const text = [withEnv(recorded), pick(UNRESOLVED), broken].map((r) => JSON.stringify(r)).join('\n');
  const validated = validateInputs([{ path, text }], { runId });
  expect(validated.problems).toEqual([]);
  return validated.episodes;
}

/**
 * A small real run: vefaas-local (bubblewrap sandboxes from examples/images), the run submitted with
 * submitRun (as `rollout-fleet submit` does, attempts from RF_ATTEMPTS), the real worker in this
 * process. Resolves once BullMQ has moved every job to completed or failed; the worker keeps running
 * (its metrics loop publishes to Redis) until `fleet` is closed.
 */
async function produceSmallRun(config: Config, logger: Logger, onFleet: (fleet: Fleet) => void): Promise<SmallRun> {
  const host = await startVefaasLocal({ imagesDir: join(ROOT, 'examples/images'), isolation: 'bwrap', logger });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    timeoutMs: config.vefaas.requestTimeoutMs,
  });
  const target = { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl };
  const worker = await startWorker({ config, target, logger, concurrency: 3 });
  onFleet({ host, vefaas, worker });

  const runId = `dash-${randomUUID().slice(0, 8)}`;
  const episodes = await smallRunEpisodes(runId);
  const run: SmallRun = { runId, completed: [], failed: [], results: new Map() };
  // Every job ends in 'completed' or (one attempt only) 'failed': BullMQ emits these after moving the job.
  const settled = new Promise<void>((resolve) => {
    const settle = (list: string[], id: string | undefined): void => {
      list.push(id ?? '');
      if (run.completed.length + run.failed.length === episodes.length) resolve();
    };
    worker.worker.on('completed', (job) => settle(run.completed, job.id));
    worker.worker.on('failed', (job) => settle(run.failed, job?.id));
  });

  const redis = createRedis(config.redis.url);
  const keys = createKeyspace(config.queue.prefix);
  const queue = new Queue<EpisodeJobData>(config.queue.name, {
    connection: redis.duplicate(),
    prefix: config.queue.prefix,
  });
  try {
    const summary = await submitRun({
      queue,
      redis,
      keys,
      runId,
      episodes,
      policy: { attempts: config.worker.attempts, backoffMs: config.worker.backoffMs, retentionS: 3600 },
    });
    expect(summary.enqueued).toBe(episodes.length);
    await settled;
    for (const item of await new ResultStore(redis, keys).read(runId))
      run.results.set(item.result.instance_id, item.result);
  } finally {
    await queue.close();
    redis.disconnect();
  }
  return run;
}

async function get(url: string): Promise<Response> {
  return fetch(url, { headers: { authorization: AUTH } });
}

/** One sample's value from Prometheus text, e.g. sample(text, 'rf_episodes_total{outcome="failed"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describeWith([bwrapNeed(), commandNeed('chromium', 'chromium')], 'dashboard in a browser over a small real run', () => {
  let config: Config;
  let fleet: Fleet | undefined;
  let dashboard: Dashboard;
  let context: BrowserContext;
  let profileDir: string;
  let run: SmallRun;

  beforeAll(async () => {
    config = loadConfig(
      {
        REDIS_URL,
        RF_PREFIX: `{rf-e2e-${randomUUID()}}`,
        RF_DASHBOARD_USER: USER,
        RF_DASHBOARD_PASSWORD: PASSWORD,
        // One attempt: the missing image fails at once instead of being retried.
        RF_ATTEMPTS: '1',
      },
      { dotenvPath: false },
    );
    const logger = createLogger({ level: 'error', format: 'json' });
    run = await produceSmallRun(config, logger, (f) => (fleet = f));
    dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger });
    profileDir = await mkdtemp(join(tmpdir(), 'rf-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      httpCredentials: { username: USER, password: PASSWORD },
      viewport: { width: 1280, height: 800 },
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (profileDir) await rm(profileDir, { recursive: true, force: true });
    await dashboard?.close();
    await fleet?.worker.close();
    await fleet?.vefaas.close();
    await fleet?.host.close();
    const queue = new Queue(config.queue.name, { connection: { url: REDIS_URL }, prefix: config.queue.prefix });
    await queue.obliterate({ force: true });
    await queue.close();
    const redis = createRedis(REDIS_URL);
    const leftovers = await redis.keys(`rf:${config.queue.prefix}:*`);
    if (leftovers.length > 0) await redis.del(...leftovers);
    redis.disconnect();
  });

  it('ran for real: two episodes completed (one resolved), the missing image failed as a configuration error', () => {
    expect(run.completed.sort()).toEqual([jobIdFor(run.runId, RESOLVES, 0), jobIdFor(run.runId, UNRESOLVED, 0)].sort());
    expect(run.failed).toEqual([jobIdFor(run.runId, NO_IMAGE, 0)]);
    expect(run.results.get(RESOLVES)).toMatchObject({ status: 'completed', resolved: true });
    expect(run.results.get(RESOLVES)?.steps).toHaveLength(3);
    expect(run.results.get(UNRESOLVED)).toMatchObject({ status: 'completed', resolved: false });
    const failed = run.results.get(NO_IMAGE);
    expect(failed).toMatchObject({ status: 'failed', steps: [] });
    expect(failed?.failure).toMatchObject({ code: 'SANDBOX_IMAGE_UNAVAILABLE', class: 'input' });
  });

  it('logs in, shows the run’s completed and failed counts, and a completed job’s step progress and logs', async () => {
    const resolved = run.results.get(RESOLVES) as EpisodeResult;
    const total = resolved.steps.length;
    const page = context.pages()[0] ?? (await context.newPage());

    const home = await page.goto(dashboard.url);
    expect(home?.status()).toBe(200);
    await page.getByRole('link', { name: config.queue.name, exact: true }).first().click();
    const badge = (status: string): ReturnType<typeof page.locator> =>
      page.locator(`a[href="/queue/${config.queue.name}?status=${status}"] [class*="badge"]`);
    await badge('completed').waitFor();
    expect(await badge('completed').textContent()).toBe('2');
    expect(await badge('failed').textContent()).toBe('1');

    // The failed list names the failed episode; its job has no steps (the sandbox never started).
    await page.locator(`a[href="/queue/${config.queue.name}?status=failed"]`).click();
    await page.getByText(`${NO_IMAGE}#0`).first().waitFor();

    // Open the resolved episode's job from the completed list.
    await page.locator(`a[href="/queue/${config.queue.name}?status=completed"]`).click();
    const jobId = jobIdFor(run.runId, RESOLVES, 0);
    await page.getByText(jobId, { exact: true }).first().click();
    await page.waitForURL((url) => decodeURIComponent(url.pathname) === `/queue/${config.queue.name}/${jobId}`);
    await page.getByText(`${RESOLVES}#0`).first().waitFor();

    await page.getByRole('tab', { name: 'Progress' }).click();
    await page.getByText(`step ${total}/${total}`).first().waitFor();

    await page.getByRole('tab', { name: 'Logs' }).click();
    // One line per step, exactly as the worker wrote them from the steps it recorded.
    for (const step of resolved.steps) await page.getByText(formatStepLog(step, total), { exact: true }).waitFor();
    expect(formatStepLog(resolved.steps[2]!, total)).toMatch(/^step 3\/3 execute_bash exit=0 \d+\.\d\ds$/);
    // Then the grade: the five tests of the image's suite plus the one the test patch adds, all passing.
    expect(formatGradingLog(resolved.grading!, true)).toBe(
      'graded parser=django (episode) tests-parsed=6 FAIL_TO_PASS 1/1 PASS_TO_PASS 5/5 resolved',
    );
    await page.getByText(formatGradingLog(resolved.grading!, true), { exact: true }).waitFor();

    await mkdir(join(ARTIFACT, '..'), { recursive: true });
    await page.screenshot({ path: ARTIFACT, fullPage: true });
  });

  it('never shows a sandbox env value: job data, logs and failures are redacted on the page and in Bull Board’s API', async () => {
    // A log line that quotes the token, as a careless step or tool might.
    const queue = new Queue<EpisodeJobData>(config.queue.name, {
      connection: { url: REDIS_URL },
      prefix: config.queue.prefix,
    });
    const resolvedId = jobIdFor(run.runId, RESOLVES, 0);
    const failedId = jobIdFor(run.runId, NO_IMAGE, 0);
    try {
      const job = await queue.getJob(resolvedId);
      expect(job?.data.episode.sandbox.env['API_TOKEN']).toBe(ENV_SECRET);
      await job?.log(`debug: API_TOKEN=${ENV_SECRET}`);
    } finally {
      await queue.close();
    }

    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${dashboard.url}queue/${config.queue.name}/${encodeURIComponent(resolvedId)}`);
    await page.getByText(`${RESOLVES}#0`).first().waitFor();
    await page.getByRole('tab', { name: 'Data' }).click();
    // Bull Board's data view folds nested objects: open sandbox, then env.
    const expand = (label: string) =>
      page
        .locator(`xpath=//*[@role="treeitem"][span[normalize-space()="${label}:"]]/span[@aria-label="expand JSON"]`)
        .first();
    await expand('sandbox').click();
    await expand('env').click();
    await page.getByText('API_TOKEN').first().waitFor();
    await page.getByText('[REDACTED]').first().waitFor();
    expect(await page.content()).not.toContain(ENV_SECRET);
    await page.getByRole('tab', { name: 'Logs' }).click();
    await page.getByText('debug: API_TOKEN=[REDACTED]').first().waitFor();
    expect(await page.content()).not.toContain(ENV_SECRET);

    // What the page is built from: the job, the job lists (with the failed job's reason) and the logs.
    const bodies = await Promise.all(
      [
        get(`${dashboard.url}api/queues/${config.queue.name}/${encodeURIComponent(resolvedId)}`),
        get(`${dashboard.url}api/queues/${config.queue.name}/${encodeURIComponent(failedId)}`),
        get(`${dashboard.url}api/queues/${config.queue.name}/${encodeURIComponent(resolvedId)}/logs`),
        get(`${dashboard.url}api/queues?activeQueue=${config.queue.name}&status=completed&page=1`),
        get(`${dashboard.url}api/queues?activeQueue=${config.queue.name}&status=failed&page=1`),
      ].map(async (response) => {
        const res = await response;
        expect(res.status).toBe(200);
        return res.text();
      }),
    );
    for (const body of bodies) expect(body).not.toContain(ENV_SECRET);
    expect(bodies[0]).toContain('"API_TOKEN":"[REDACTED]"');
    expect(bodies[2]).toContain('debug: API_TOKEN=[REDACTED]');
  });

  it('serves the run’s counts at /api/runs/<runId> and a run page listing its results', async () => {
    const res = await get(`${dashboard.url}api/runs/${encodeURIComponent(run.runId)}`);
    expect(res.status).toBe(200);
    const status = (await res.json()) as RunStatus;
    expect(status).toMatchObject({
      runId: run.runId,
      exists: true,
      total: 3,
      done: 3,
      completed: 2,
      failed: 1,
      resolved: 1,
      resolvedRate: 0.5,
      active: 0,
      waiting: 0,
      etaS: 0,
    });
    expect(status.throughputPerS).toBeGreaterThan(0);

    const page = context.pages()[0] ?? (await context.newPage());
    const response = await page.goto(`${dashboard.url}runs/${encodeURIComponent(run.runId)}`);
    expect(response?.status()).toBe(200);
    await page.getByRole('heading', { name: `Run ${run.runId}` }).waitFor();
    const rows = page.locator('tbody tr');
    await expect.poll(() => page.locator('table').last().locator('tbody tr').count()).toBe(3);
    expect(await rows.filter({ hasText: `${NO_IMAGE}#0` }).textContent()).toMatch(/failed \(SANDBOX_[A-Z_]+\)/);
    expect(await rows.filter({ hasText: `${RESOLVES}#0` }).textContent()).toContain('yes');
    expect(await rows.filter({ hasText: `${UNRESOLVED}#0` }).textContent()).toContain('no');
    await page.screenshot({ path: RUN_ARTIFACT, fullPage: true });

    // The run's replay fidelity: RESOLVES is the one replayed episode (2 recorded observations), diverging at step 0.
    expect(status.fidelity).toMatchObject({ replayed: 1, clean: 0, cleanShare: 0, stepsCompared: 2, stepsMatched: 1 });
    expect(status.fidelity.firstDivergence['0']).toBe(1);
    await page.getByText('replayed without divergence').waitFor();
    expect(await page.locator('tr', { hasText: 'replayed without divergence' }).textContent()).toContain(
      '0 / 1 (0.0%)',
    );
    expect(await page.locator('tr', { hasText: 'first divergence at step' }).textContent()).toContain('0: 1');

    // A result links to its job in Bull Board…
    await page
      .locator('tr', { hasText: `${RESOLVES}#0` })
      .getByRole('link', { name: 'job' })
      .click();
    await page.getByText(`${RESOLVES}#0`).first().waitFor();
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(
      `/queue/${config.queue.name}/${jobIdFor(run.runId, RESOLVES, 0)}`,
    );
    // …and to its episode viewer.
    await page.goto(`${dashboard.url}runs/${encodeURIComponent(run.runId)}`);
    await page.getByRole('link', { name: `${RESOLVES}#0` }).click();
    await page.getByRole('heading', { name: `Episode ${RESOLVES}#0` }).waitFor();
  });

  it('shows one episode step by step: observations, the diff where they differ, patch, grading, attempts', async () => {
    const resolved = run.results.get(RESOLVES)!;
    expect(resolved.fidelity).toMatchObject({
      compared: 2,
      matched: 1,
      differed: 1,
      no_record: 1,
      first_divergence: 0,
      ratio: 0.5,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    const response = await page.goto(
      `${dashboard.url}episodes/${encodeURIComponent(jobIdFor(run.runId, RESOLVES, 0))}`,
    );
    expect(response?.status()).toBe(200);
    await page.getByRole('heading', { name: `Episode ${RESOLVES}#0` }).waitFor();

    const step = (i: number) => page.locator(`#step-${i}`);
    expect(await step(0).locator('h3').textContent()).toBe('Step 0 · str_replace_editor differs');
    expect(await step(1).locator('h3').textContent()).toBe('Step 1 · str_replace_editor no record');
    expect(await step(2).locator('h3').textContent()).toBe('Step 2 · execute_bash match');
    // Replayed and recorded observation side by side, and the diff marking the one changed line.
    expect(await step(0).locator('pre.replayed').textContent()).toBe(resolved.steps[0]!.output);
    expect(await step(0).locator('pre.recorded').textContent()).toBe(RECORDED_VIEW);
    expect(await step(0).locator('pre.diff .del').allTextContents()).toEqual(['-     3\t    return a + b']);
    expect(await step(0).locator('pre.diff .add').allTextContents()).toEqual(['+     3\t    return a - b']);
    expect(await step(2).locator('pre.command').textContent()).toBe(
      "cd /testbed && python3 -c 'from pyutils.calc import add; print(add(2, 3))'",
    );
    expect(await step(2).locator('.muted').first().textContent()).toMatch(/^exit 0 · \d/);
    expect(await step(1).getByText('none recorded').count()).toBe(1);
    // The patch, each FAIL_TO_PASS / PASS_TO_PASS test with its outcome, the attempt.
    expect(await page.locator('pre.patch').textContent()).toContain('+    return a + b');
    const tests = page.locator('table.tests tbody tr');
    expect(await tests.count()).toBe(6);
    expect(await tests.filter({ hasText: 'test_add (tests.test_basic.TestCalcAdd.test_add)' }).textContent()).toBe(
      'test_add (tests.test_basic.TestCalcAdd.test_add)FAIL_TO_PASSsuccess',
    );
    // How it was graded: the episode's parser, six results parsed (five tests of the suite + the patch's), each
    // listed test PASSED in the log, nothing to check, the eval log with unittest's own summary.
    expect(await page.locator('table.grading-facts tr').allTextContents()).toEqual([
      'parserdjango (eval.log_parser)',
      'tests parsed6',
      'tests ranyes',
      'timed outno',
    ]);
    const graded = page.locator('table.graded-tests tbody tr');
    expect(await graded.count()).toBe(6);
    expect(await graded.locator('td:nth-child(3)').allTextContents()).toEqual(Array(6).fill('PASSED'));
    expect(await page.locator('.grading-problem').count()).toBe(0);
    const evalLog = await page.locator('pre.eval-log').textContent();
    expect(evalLog).toContain('test_add (tests.test_basic.TestCalcAdd.test_add) ... ok');
    expect(evalLog).toMatch(/Ran 6 tests in [\d.]+s\n\nOK/);
    expect(await page.locator('table.attempts tbody tr').count()).toBe(1);
    expect(await page.locator('table.attempts tbody tr').textContent()).toContain('ok');
    await page.screenshot({ path: EPISODE_ARTIFACT, fullPage: true });

    // Bull Board's job view links to the same page (in a new tab).
    await page.goto(
      `${dashboard.url}queue/${config.queue.name}/${encodeURIComponent(jobIdFor(run.runId, RESOLVES, 0))}`,
    );
    const opened = context.waitForEvent('page');
    await page.getByRole('link', { name: 'Episode viewer' }).click();
    const viewer = await opened;
    await viewer.getByRole('heading', { name: `Episode ${RESOLVES}#0` }).waitFor();
    await viewer.close();

    // Same authentication as everything else; a result that does not exist is a 404.
    expect(
      (await fetch(`${dashboard.url}episodes/${encodeURIComponent(jobIdFor(run.runId, RESOLVES, 0))}`)).status,
    ).toBe(401);
    expect((await get(`${dashboard.url}episodes/${encodeURIComponent(jobIdFor(run.runId, 'nope', 0))}`)).status).toBe(
      404,
    );
    expect((await get(`${dashboard.url}episodes/not-a-job-id`)).status).toBe(400);
  });

  it('aggregates the worker’s published metrics into /metrics', async () => {
    // The worker publishes its snapshot to Redis every few seconds by itself; wait for one taken after the run.
    let text = '';
    await vi.waitFor(
      async () => {
        text = await (await get(`${dashboard.url}metrics`)).text();
        expect(sample(text, 'rf_episodes_total{outcome="failed"}')).toBe(1);
      },
      { timeout: 10_000, interval: 250 },
    );
    expect(sample(text, 'rf_episodes_total{outcome="resolved"}')).toBe(1);
    expect(sample(text, 'rf_episodes_total{outcome="unresolved"}')).toBe(1);
    const steps = run.results.get(RESOLVES)!.steps.length + run.results.get(UNRESOLVED)!.steps.length;
    expect(
      (sample(text, 'rf_steps_total{tool="str_replace_editor"}') ?? 0) +
        (sample(text, 'rf_steps_total{tool="execute_bash"}') ?? 0),
    ).toBe(steps);
    for (const outcome of ['resolved', 'unresolved', 'failed'])
      expect(sample(text, `rf_episode_duration_seconds_count{outcome="${outcome}"}`)).toBe(1);
    // Both completed episodes started two sandboxes (the agent's and the fresh grading one); the missing image none.
    expect(sample(text, 'rf_sandbox_create_seconds_count')).toBe(4);
    expect(sample(text, 'rf_workers_reporting')).toBe(1);
    expect(sample(text, `rf_queue_jobs{queue="${config.queue.name}",state="completed"}`)).toBe(2);
    expect(sample(text, `rf_queue_jobs{queue="${config.queue.name}",state="failed"}`)).toBe(1);
    expect(sample(text, 'rf_runs_known')).toBe(1);
    expect(sample(text, 'rf_live_sandboxes')).toBe(0);
    // Replay fidelity: per step from the worker, per run from the results.
    expect(sample(text, 'rf_fidelity_steps_total{verdict="match"}')).toBe(1);
    expect(sample(text, 'rf_fidelity_steps_total{verdict="differs"}')).toBe(1);
    expect(sample(text, 'rf_fidelity_steps_total{verdict="no_record"}')).toBe(steps - 2);
    expect(sample(text, `rf_run_fidelity_episodes{run="${run.runId}",first_divergence="0"}`)).toBe(1);
    expect(sample(text, `rf_run_fidelity_episodes{run="${run.runId}",first_divergence="none"}`)).toBe(0);
    expect(sample(text, `rf_run_fidelity_clean_ratio{run="${run.runId}"}`)).toBe(0);
    expect(sample(text, `rf_run_fidelity_step_ratio{run="${run.runId}"}`)).toBe(0.5);
  });
});
