import { request } from 'node:http';
import { Queue } from 'bullmq';
import { type Config, createRedis, type RedisClient } from '@rollout-fleet/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from './start-dashboard.js';
import {
  TEST_REDIS_URL,
  capturingLogger,
  dashboardTestConfig,
  deletePrefix,
} from '@rollout-fleet/test-kit/dashboard-kit';

const USER = 'operator-7c1e';
const PASSWORD = 'pw-unique-55d0a9e1';
const TOKEN = 'tok-unique-b3f28c4d7e';
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Every kind of route: Bull Board pages, its static assets and API, our API and pages, /metrics, a 404. */
const ROUTES = [
  '/',
  '/queue/episodes',
  '/static/favicon-32x32.png',
  '/api/queues',
  '/api/redis/stats',
  '/api/runs',
  '/api/runs/x',
  '/runs',
  '/runs/x',
  '/metrics',
  '/no-such-page',
];

describe('dashboard security (plain HTTP)', () => {
  let redis: RedisClient;
  const started: Dashboard[] = [];
  const prefixes: string[] = [];

  async function start(
    env: Record<string, string>,
    extra: { host?: string } = {},
  ): Promise<{ dashboard: Dashboard; config: Config; logs: () => string }> {
    const config = dashboardTestConfig(env);
    prefixes.push(config.queue.prefix);
    const { logger, text } = capturingLogger();
    const dashboard = await startDashboard({ config, port: 0, host: extra.host ?? '127.0.0.1', logger, redis });
    started.push(dashboard);
    return { dashboard, config, logs: text };
  }

  const call = (dashboard: Dashboard, path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(new URL(path, dashboard.url), init);

  beforeAll(() => {
    redis = createRedis(TEST_REDIS_URL);
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((d) => d.close()));
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  it('answers 401 with a Basic challenge on every route without valid credentials, and serves them with', async () => {
    const { dashboard, logs } = await start({ RF_DASHBOARD_USER: USER, RF_DASHBOARD_PASSWORD: PASSWORD });
    for (const path of ROUTES) {
      for (const authorization of [
        undefined,
        basic(USER, 'wrong'),
        basic('someone', PASSWORD),
        `Bearer ${PASSWORD}`,
        'Basic !!!',
      ]) {
        const res = await call(dashboard, path, authorization === undefined ? {} : { headers: { authorization } });
        expect(res.status, `${path} with ${authorization ?? 'nothing'}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
        await res.arrayBuffer();
      }
    }
    // Writes too: auth comes before the CSRF check and before Bull Board.
    const write = await call(dashboard, '/api/queues/episodes/pause', {
      method: 'PUT',
      headers: { origin: dashboard.url.slice(0, -1) },
    });
    expect(write.status).toBe(401);

    const expected: Record<string, number> = { '/api/runs/x': 404, '/runs/x': 404 };
    for (const path of ROUTES.filter((p) => p !== '/no-such-page')) {
      const res = await call(dashboard, path, { headers: { authorization: basic(USER, PASSWORD) } });
      expect(res.status, path).toBe(expected[path] ?? 200);
      await res.arrayBuffer();
    }
    const text = logs();
    expect(text).toContain('dashboard listening');
    for (const secret of [PASSWORD, basic(USER, PASSWORD).slice(6), basic(USER, 'wrong').slice(6)])
      expect(text).not.toContain(secret);
  });

  it('accepts the token as a bearer header or as the basic-auth password, never a wrong one; logs neither', async () => {
    const { dashboard, logs } = await start({ RF_DASHBOARD_TOKEN: TOKEN });
    expect((await call(dashboard, '/api/runs', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    expect((await call(dashboard, '/api/runs', { headers: { authorization: basic('anyone', TOKEN) } })).status).toBe(
      200,
    );
    const wrong = await call(dashboard, '/api/runs', { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toContain('Bearer realm=');
    expect((await call(dashboard, '/metrics')).status).toBe(401);
    expect(logs()).not.toContain(TOKEN);
  });

  it('serves /metrics without credentials only when RF_METRICS_PUBLIC is set; everything else stays 401', async () => {
    const { dashboard } = await start({
      RF_DASHBOARD_USER: USER,
      RF_DASHBOARD_PASSWORD: PASSWORD,
      RF_METRICS_PUBLIC: '1',
    });
    const metrics = await call(dashboard, '/metrics');
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('rf_queue_jobs{queue="episodes",state="waiting"} 0');
    for (const path of ROUTES.filter((p) => p !== '/metrics'))
      expect((await call(dashboard, path)).status, path).toBe(401);
    // Only GET is public: a write to /metrics still needs credentials.
    expect((await call(dashboard, '/metrics', { method: 'POST' })).status).toBe(401);
  });

  it('answers /healthz without credentials with Redis reachability only, on a dashboard that requires them', async () => {
    const { dashboard } = await start({ RF_DASHBOARD_USER: USER, RF_DASHBOARD_PASSWORD: PASSWORD });
    const res = await call(dashboard, '/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, redis: 'ok' });
    expect((await call(dashboard, '/healthz', { method: 'POST' })).status).toBe(401);
  });

  it('refuses a non-loopback address without credentials, and half-set basic credentials', async () => {
    const config = dashboardTestConfig();
    const { logger } = capturingLogger();
    await expect(startDashboard({ config, port: 0, host: '0.0.0.0', logger, redis })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/refusing to listen on 0\.0\.0\.0 without credentials/),
    });
    await expect(startDashboard({ config, port: 0, host: '::', logger, redis })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
    const half = dashboardTestConfig({ RF_DASHBOARD_USER: USER });
    await expect(startDashboard({ config: half, port: 0, host: '127.0.0.1', logger, redis })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
    // With credentials a non-loopback address is fine.
    const { dashboard } = await start({ RF_DASHBOARD_TOKEN: TOKEN }, { host: '0.0.0.0' });
    expect(dashboard.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/$/);
  });

  it('without credentials on loopback, answers only requests whose Host is loopback (DNS rebinding)', async () => {
    const { dashboard } = await start({});
    expect((await call(dashboard, '/api/runs')).status).toBe(200);
    // fetch cannot set Host; node:http can, as a DNS-rebound browser effectively does.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(
        new URL('/api/runs', dashboard.url),
        { headers: { host: 'attacker.example:8080' } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.once('error', reject).end();
    });
    expect(status).toBe(403);
  });

  it('refuses cross-site writes (no or foreign Origin) and accepts same-origin ones and bearer-authenticated ones', async () => {
    const { dashboard, config, logs } = await start({
      RF_DASHBOARD_USER: USER,
      RF_DASHBOARD_PASSWORD: PASSWORD,
      RF_DASHBOARD_TOKEN: TOKEN,
    });
    const queue = new Queue(config.queue.name, { connection: { url: TEST_REDIS_URL }, prefix: config.queue.prefix });
    try {
      const pause = (headers: Record<string, string>): Promise<Response> =>
        call(dashboard, '/api/queues/episodes/pause', { method: 'PUT', headers });
      const auth = { authorization: basic(USER, PASSWORD) };
      const origin = dashboard.url.slice(0, -1);
      expect((await pause(auth)).status).toBe(403);
      expect((await pause({ ...auth, origin: 'https://evil.example' })).status).toBe(403);
      expect((await pause({ ...auth, origin: 'null' })).status).toBe(403);
      expect((await pause({ ...auth, referer: 'https://evil.example/x' })).status).toBe(403);
      expect(await queue.isPaused()).toBe(false);

      expect((await pause({ ...auth, origin })).status).toBe(200);
      expect(await queue.isPaused()).toBe(true);
      const resume = await call(dashboard, '/api/queues/episodes/resume', {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(resume.status).toBe(200);
      expect(await queue.isPaused()).toBe(false);
      expect(logs()).toContain('cross-site write refused');
      expect(logs()).not.toContain(PASSWORD);
      expect(logs()).not.toContain(TOKEN);
    } finally {
      await queue.close();
    }
  });

  it('read-only mode: Bull Board refuses writes even from the same origin', async () => {
    const { dashboard } = await start({
      RF_DASHBOARD_USER: USER,
      RF_DASHBOARD_PASSWORD: PASSWORD,
      RF_DASHBOARD_READ_ONLY: '1',
    });
    const res = await call(dashboard, '/api/queues/episodes/pause', {
      method: 'PUT',
      headers: { authorization: basic(USER, PASSWORD), origin: dashboard.url.slice(0, -1) },
    });
    expect(res.status).toBe(405);
  });
});
