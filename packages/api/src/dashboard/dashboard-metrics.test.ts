import { Queue } from 'bullmq';
import { type Config, createKeyspace, createRedis, type RedisClient } from '@rollout-fleet/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseStore } from '@rollout-fleet/sandbox';
import { createWorkerMetrics, publishMetrics } from '@rollout-fleet/worker';
import { startDashboard, type Dashboard } from './start-dashboard.js';
import {
  TEST_REDIS_URL,
  capturingLogger,
  dashboardTestConfig,
  deletePrefix,
} from '@rollout-fleet/test-kit/dashboard-kit';

/** The value of one sample line `name{labels} value` in Prometheus text. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('dashboard /metrics', () => {
  let redis: RedisClient;
  let config: Config;
  let dashboard: Dashboard;

  beforeAll(async () => {
    redis = createRedis(TEST_REDIS_URL);
    config = dashboardTestConfig({ RF_METRICS_PUBLIC: 'true' });
    dashboard = await startDashboard({
      config,
      port: 0,
      host: '127.0.0.1',
      logger: capturingLogger().logger,
      redis,
      metricsStaleAfterMs: 60_000,
    });
  });
  afterAll(async () => {
    await dashboard.close();
    await deletePrefix(redis, config.queue.prefix);
    redis.disconnect();
  });

  it('sums the snapshots two workers published and adds queue, lease and run gauges read at scrape time', async () => {
    const keys = createKeyspace(config.queue.prefix);
    const [a, b] = [createWorkerMetrics(), createWorkerMetrics()];
    a.episodes.inc({ outcome: 'resolved' }, 3);
    b.episodes.inc({ outcome: 'resolved' }, 2);
    b.episodes.inc({ outcome: 'failed' });
    a.retries.inc({ code: 'VEFAAS_THROTTLED' });
    a.stepSeconds.observe({ tool: 'bash' }, 0.2);
    b.stepSeconds.observe({ tool: 'bash' }, 3);
    a.liveSandboxes.set(4);
    b.liveSandboxes.set(1);
    await publishMetrics(redis, keys, 'worker-a', a.registry);
    await publishMetrics(redis, keys, 'worker-b', b.registry);
    // A worker that died without unpublishing: its old snapshot must not count.
    const gone = createWorkerMetrics();
    gone.episodes.inc({ outcome: 'resolved' }, 100);
    await publishMetrics(redis, keys, 'worker-gone', gone.registry, Date.now() - 10 * 60_000);

    const queue = new Queue(config.queue.name, { connection: { url: TEST_REDIS_URL }, prefix: config.queue.prefix });
    await queue.add('inst-1#0', { n: 1 });
    await queue.add('inst-2#0', { n: 2 });
    await queue.close();
    // Two held slots, one of them still starting; a third whose lease key Redis has already expired.
    const slots = new LeaseStore(redis, keys, { ttlMs: 60_000 });
    for (const [ticket, started] of [
      ['t-live', true],
      ['t-starting', false],
    ] as const) {
      await slots.reserve({ ticket, owner: 'o', target: 'default', spec: 's', maxLive: 10, maxStarting: 10 });
      if (started)
        await slots.update(ticket, 'o', { target: 'default', sandbox: 'sb-1', spec: 's', leaveStarting: true });
    }
    await redis.zadd(keys.leases(), 1, 't-expired');
    await redis.sadd(keys.runs(), 'run-1', 'run-2', 'run-3');

    const res = await fetch(new URL('/metrics', dashboard.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'rf_episodes_total{outcome="resolved"}')).toBe(5);
    expect(sample(text, 'rf_episodes_total{outcome="failed"}')).toBe(1);
    expect(sample(text, 'rf_retries_total{code="VEFAAS_THROTTLED"}')).toBe(1);
    expect(sample(text, 'rf_step_duration_seconds_count{tool="bash"}')).toBe(2);
    expect(sample(text, 'rf_step_duration_seconds_bucket{le="0.25",tool="bash"}')).toBe(1);
    expect(sample(text, 'rf_live_sandboxes')).toBe(5);
    expect(sample(text, 'rf_workers_reporting')).toBe(2);
    expect(sample(text, 'rf_queue_jobs{queue="episodes",state="waiting"}')).toBe(2);
    expect(sample(text, 'rf_queue_jobs{queue="episodes",state="failed"}')).toBe(0);
    expect(sample(text, 'rf_fleet_sandboxes{state="live"}')).toBe(2);
    expect(sample(text, 'rf_fleet_sandboxes{state="starting"}')).toBe(1);
    expect(sample(text, 'rf_fleet_sandboxes{state="waiting"}')).toBe(0);
    expect(await redis.zscore(keys.leases(), 't-expired')).toBeNull();
    expect(sample(text, 'rf_runs_known')).toBe(3);
    expect(await redis.hexists(keys.metrics(), 'worker-gone')).toBe(0);
  });
});
