import { Queue } from 'bullmq';
import {
  type Config,
  createKeyspace,
  createRedis,
  type EpisodeResult,
  jobIdFor,
  type RedisClient,
  ResultStore,
  type RunStatus,
} from '@rollout-fleet/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from './start-dashboard.js';
import {
  TEST_REDIS_URL,
  capturingLogger,
  dashboardTestConfig,
  deletePrefix,
} from '@rollout-fleet/test-kit/dashboard-kit';

function result(runId: string, i: number, overrides: Partial<EpisodeResult> = {}): EpisodeResult {
  return {
    run_id: runId,
    episode_id: `e${i}`,
    instance_id: `repo__pkg-${i}`,
    sample_index: 0,
    status: 'completed',
    resolved: true,
    reward: 1,
    steps: [],
    patch: null,
    report: null,
    timings: { queue_wait_ms: 0, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 61_000 },
    attempts: [],
    failure: null,
    worker_id: 'w',
    sandbox_id: null,
    finished_at: new Date().toISOString(),
    metadata: {},
    ...overrides,
  };
}

/** The grade of an episode whose unittest output was read with the pytest parser. */
const ZERO_PARSED: EpisodeResult['grading'] = {
  parser: 'pytest',
  parser_source: 'repository',
  tests_ran: true,
  timed_out: false,
  tests_parsed: 0,
  tests: [
    {
      id: 'test_add (t.C.test_add)',
      list: 'FAIL_TO_PASS',
      status: null,
      outcome: 'failure',
      hint: 'not found in the test log — check the id format for this parser',
    },
  ],
  problem: 'the pytest parser found 0 test results in the eval log',
  log: 'OK\n',
  log_bytes: 3,
  log_truncated: false,
};

describe('dashboard run API and pages', () => {
  let redis: RedisClient;
  let config: Config;
  let dashboard: Dashboard;
  const runId = 'sweep/2026-11-29';

  beforeAll(async () => {
    redis = createRedis(TEST_REDIS_URL);
    config = dashboardTestConfig();
    const keys = createKeyspace(config.queue.prefix);
    await redis.sadd(keys.runs(), runId);
    await redis.hset(keys.run(runId), { total: 5, created_at: '2026-11-29T10:00:00.000Z' });
    const store = new ResultStore(redis, keys);
    await store.commit(result(runId, 0));
    await store.commit(result(runId, 1, { resolved: false, reward: 0, grading: ZERO_PARSED }));
    await store.commit(result(runId, 2, { instance_id: '<script>alert(1)</script>', steps: [], resolved: true }));
    await store.commit(
      result(runId, 3, {
        status: 'failed',
        resolved: null,
        reward: null,
        failure: { code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' },
      }),
    );
    dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: capturingLogger().logger, redis });
  });
  afterAll(async () => {
    await dashboard.close();
    await deletePrefix(redis, config.queue.prefix);
    redis.disconnect();
  });

  it('/api/runs/<id> summarises counts, resolved rate, throughput and ETA; /api/runs lists known runs', async () => {
    const res = await fetch(new URL(`/api/runs/${runId}`, dashboard.url));
    expect(res.status).toBe(200);
    const status = (await res.json()) as RunStatus;
    expect(status).toMatchObject({
      runId,
      exists: true,
      total: 5,
      done: 4,
      completed: 3,
      failed: 1,
      resolved: 2,
      waiting: 1,
    });
    expect(status.resolvedRate).toBeCloseTo(2 / 3);
    expect(status.throughputPerS).toBeGreaterThan(0);
    expect(status.etaS).toBeGreaterThanOrEqual(0);

    const list = (await (await fetch(new URL('/api/runs', dashboard.url))).json()) as {
      runs: Array<{ runId: string; done: number }>;
    };
    expect(list.runs).toEqual([expect.objectContaining({ runId, total: 5, done: 4, resolved: 2 })]);
    expect((await fetch(new URL('/api/runs/nope', dashboard.url))).status).toBe(404);
    // A typo in the address gets the closest run ids, as the CLI and the API give them.
    const typo = `${runId.slice(0, -1)}`;
    const unknown = await fetch(new URL(`/api/runs/${typo}`, dashboard.url));
    expect([unknown.status, await unknown.json()]).toEqual([
      404,
      { error: 'run not found', runId: typo, didYouMean: [runId] },
    ]);
    const page = await fetch(new URL(`/runs/${typo}`, dashboard.url));
    expect(page.status).toBe(404);
    expect(await page.text()).toContain(`<p>Unknown run. Did you mean <a href="/runs/${runId}">${runId}</a>?</p>`);
    expect((await fetch(new URL('/api/runs/bad%20id', dashboard.url))).status).toBe(400);
  });

  it('the run page shows the counts and recent results newest first, escaping every value', async () => {
    const res = await fetch(new URL(`/runs/${runId}`, dashboard.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await res.text();
    expect(page).toContain('<meta http-equiv="refresh" content="5">');
    expect(page).toContain('<td>resolved rate</td><td>66.7%</td>');
    expect(page).not.toContain('<script>alert(1)</script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;#0');
    expect(page).toContain('failed (SANDBOX_DEAD)');
    // An unresolved result that parsed no tests is flagged in the list, not only on its own page.
    expect(page).toContain(
      '<span class="bad">no</span> <small class="bad grading-flag" title="the pytest parser found 0 test results in the eval log">(0 tests parsed — see the episode)</small>',
    );
    expect(page.match(/grading-flag/g)).toHaveLength(1);
    expect(page).toContain('1m 1s');
    // Newest first, each linked to its Bull Board job.
    expect(page.indexOf('repo__pkg-3#0')).toBeLessThan(page.indexOf('repo__pkg-0#0'));
    expect(page).toContain(`href="/queue/episodes/${encodeURIComponent(`${runId}|e0|0`)}"`);

    // Bull Board links to the run pages from its menu.
    const board = await (await fetch(dashboard.url)).text();
    expect(board).toContain('"miscLinks":[{"text":"Runs","url":"/runs"}');

    const index = await (await fetch(new URL('/runs', dashboard.url))).text();
    expect(index).toContain(`<a href="/runs/${runId}">${runId}</a>`);
  });

  it("the episode page shows step output, recorded observations and the eval log through the job's redaction", async () => {
    const secret = 'sk-live-4f1d2e9a7b';
    const other = 'leaky-run';
    const queue = new Queue(config.queue.name, { connection: { url: TEST_REDIS_URL }, prefix: config.queue.prefix });
    try {
      await queue.add(
        'episode',
        {
          episode: {
            run_id: other,
            episode_id: 'e9',
            instance_id: 'repo__pkg-9',
            sandbox: { image: 'pyutils', env: { API_TOKEN: secret } },
            trajectory: [{ name: 'execute_bash', arguments: { command: 'env' }, observation: `API_TOKEN=${secret}` }],
          },
          enqueued_at: new Date().toISOString(),
        },
        { jobId: jobIdFor(other, 'e9', 0) },
      );
    } finally {
      await queue.close();
    }
    const store = new ResultStore(redis, createKeyspace(config.queue.prefix));
    await store.commit(
      result(other, 9, {
        run_id: other,
        resolved: false,
        reward: 0,
        steps: [
          {
            index: 0,
            tool: 'execute_bash',
            args: { command: 'env' },
            command: 'env',
            output: `API_TOKEN=${secret}\n`,
            output_bytes: 30,
            truncated: false,
            exit_code: 0,
            duration_ms: 3,
            timed_out: false,
          },
        ],
        grading: { ...ZERO_PARSED, log: `+ env\nAPI_TOKEN=${secret}\n`, log_bytes: 40 },
      }),
    );
    const res = await fetch(new URL(`/episodes/${encodeURIComponent(jobIdFor(other, 'e9', 0))}`, dashboard.url));
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).not.toContain(secret);
    expect(page).toContain('<pre class="replayed">API_TOKEN=[REDACTED]\n</pre>');
    expect(page).toContain('<pre class="recorded">API_TOKEN=[REDACTED]</pre>');
    expect(page).toContain('<pre class="eval-log">+ env\nAPI_TOKEN=[REDACTED]\n</pre>');
  });
});
