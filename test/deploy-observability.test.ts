/**
 * What ships for Prometheus and Grafana (deploy/prometheus, deploy/grafana) against what the code exports: the
 * alert rules pass `promtool check rules` and their own `promtool test rules` cases (each alert fires on what it
 * names, a healthy fleet fires none); every series a dashboard panel or an alert reads is one the dashboard's
 * /metrics serves; and every metric it serves is documented in docs/metrics.md.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyspace, createRedis, type Config, type RedisClient } from '@rollout-fleet/shared';
import { startDashboard, type Dashboard } from '@rollout-fleet/api/dashboard';
import { createWorkerMetrics, publishMetrics } from '@rollout-fleet/worker';
import { commandNeed, itWith } from '@rollout-fleet/test-kit/needs';
import {
  TEST_REDIS_URL,
  capturingLogger,
  dashboardTestConfig,
  deletePrefix,
} from '@rollout-fleet/test-kit/dashboard-kit';
import { ROOT } from './support/pipeline-harness.js';

const PROMETHEUS_DIR = `${ROOT}deploy/prometheus`;

interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  datasource?: { uid: string };
  targets?: Array<{ refId: string; expr: string; datasource?: { uid: string } }>;
}

/** The metric names an expression reads (`rf_*`; Prometheus's own `up` aside). */
function metricsIn(expr: string): string[] {
  return [...new Set(expr.match(/\brf_[a-z0-9_]+/g) ?? [])];
}

function promtool(args: string[]): { code: number | null; output: string } {
  const run = spawnSync('promtool', args, { cwd: PROMETHEUS_DIR, encoding: 'utf8' });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('deploy/prometheus and deploy/grafana', () => {
  let redis: RedisClient;
  let config: Config;
  let dashboard: Dashboard;
  /** Metric families /metrics serves (`# TYPE` lines), with their type. */
  const served = new Map<string, string>();

  beforeAll(async () => {
    redis = createRedis(TEST_REDIS_URL);
    config = dashboardTestConfig({ RF_METRICS_PUBLIC: 'true' });
    dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: capturingLogger().logger, redis });
    // One worker's snapshot, as a live worker publishes it, so the fleet's worker metrics are in the scrape.
    const worker = createWorkerMetrics();
    worker.process.sample();
    worker.process.stop();
    await publishMetrics(redis, createKeyspace(config.queue.prefix), 'worker-1', worker.registry);
    const text = await (await fetch(new URL('/metrics', dashboard.url))).text();
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) served.set(name!, type!);
  });
  afterAll(async () => {
    await dashboard?.close();
    await deletePrefix(redis, config.queue.prefix);
    redis.disconnect();
  });

  /** Whether /metrics serves `name`: a family, or a histogram's _bucket/_sum/_count series. */
  const isServed = (name: string): boolean => {
    if (served.has(name)) return true;
    const family = name.replace(/_(bucket|sum|count)$/, '');
    return family !== name && served.get(family) === 'histogram';
  };

  itWith([commandNeed('promtool', 'prometheus')], 'alert rules pass promtool check rules', () => {
    const check = promtool(['check', 'rules', 'alerts.yml']);
    expect(check.output).toMatch(/SUCCESS: 5 rules found/);
    expect(check.code, check.output).toBe(0);
  });

  itWith(
    [commandNeed('promtool', 'prometheus')],
    'each alert fires on the situation it names, and none on a healthy fleet (promtool test rules)',
    () => {
      const test = promtool(['test', 'rules', 'alerts.test.yml']);
      expect(test.code, test.output).toBe(0);
      expect(test.output).toMatch(/SUCCESS/);
    },
  );

  it('every alert reads only series /metrics serves, and names the job Prometheus scrapes', async () => {
    const rules = await readFile(`${PROMETHEUS_DIR}/alerts.yml`, 'utf8');
    const exprs = [...rules.matchAll(/^\s+expr: (.+)$/gm)].map((m) => m[1]!);
    expect(exprs).toHaveLength(5);
    for (const expr of exprs)
      for (const name of metricsIn(expr)) expect(isServed(name), `${name} in ${expr}`).toBe(true);
    expect(rules).toContain('up{job="rollout-fleet"}');
  });

  it('the Grafana dashboard: every panel placed and sourced from the imported Prometheus, every series served', async () => {
    const dash = JSON.parse(await readFile(`${ROOT}deploy/grafana/rollout-fleet.json`, 'utf8')) as {
      __inputs: Array<{ name: string; pluginId: string }>;
      uid: string;
      panels: GrafanaPanel[];
    };
    expect(dash.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    const panels = dash.panels.filter((p) => p.type !== 'row');
    expect(new Set(dash.panels.map((p) => p.id)).size).toBe(dash.panels.length);
    const titles = panels.map((p) => p.title);
    // What an operator looks for first (issue: backlog, throughput, resolved rate, failures by code, supply,
    // policy inflight, worker health).
    for (const wanted of [
      /Backlog/,
      /Throughput/,
      /Resolved rate/,
      /failures by code/i,
      /Fleet sandboxes/,
      /Policy requests in flight/,
      /Workers reporting/,
    ])
      expect(
        titles.some((t) => wanted.test(t)),
        String(wanted),
      ).toBe(true);
    const read = new Set<string>();
    for (const panel of panels) {
      expect(panel.gridPos, panel.title).toBeDefined();
      expect(panel.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets!) {
        expect(target.datasource?.uid, panel.title).toBe('${DS_PROMETHEUS}');
        const names = metricsIn(target.expr);
        expect(names.length, target.expr).toBeGreaterThan(0);
        for (const name of names) {
          expect(isServed(name), `${panel.title}: ${name}`).toBe(true);
          read.add(name);
        }
      }
    }
    expect(read).toContain('rf_episode_failures_total');
  });

  it('docs/metrics.md documents every metric /metrics serves', async () => {
    const doc = await readFile(`${ROOT}docs/metrics.md`, 'utf8');
    const documented = new Set([...doc.matchAll(/^\| `(rf_[a-z0-9_]+)` \|/gm)].map((m) => m[1]!));
    expect(served.size).toBeGreaterThan(20);
    const undocumented = [...served.keys()].filter((name) => name.startsWith('rf_') && !documented.has(name));
    expect(undocumented).toEqual([]);
  });
});
