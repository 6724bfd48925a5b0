/**
 * Redis Cluster end to end: a local three-master cluster (redis-server --cluster-enabled yes on three free
 * ports + redis-cli --cluster create) and the product configured with REDIS_URL=redis+cluster://… and the
 * DEFAULT prefix {rf}. Submit (CLI), two worker processes (queue, leases, results commit, metrics, reaper),
 * status / results / cancel (CLI), the reaper killing a sandbox whose lease expired, and the dashboard's
 * counters all run against the cluster. Any script or multi-key command whose keys span slots fails here
 * with CROSSSLOT. A prefix without braces, and a plain redis:// URL pointing at a cluster node, are refused.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { AGENT_ENV_LABEL_KEY, LeaseStore, ensureFleetId } from '@rollout-fleet/sandbox';
import {
  createKeyspace,
  createRedis,
  isCluster,
  keysMatching,
  type Config,
  type EpisodeResult,
  type RedisClient,
} from '@rollout-fleet/shared';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { commandNeed, describeWith } from '@rollout-fleet/test-kit/needs';
import { startDashboard, type Dashboard } from '@rollout-fleet/api/dashboard';
import {
  FLEET_LABEL_KEY,
  SWEEP,
  cloudEnvFor,
  configOf,
  fleetSandboxes,
  readExpected,
  runCli,
  silentLogger,
  spawnWorker,
  startHost,
  stopChild,
  type Host,
} from './support/pipeline-harness.js';
import { startRedisCluster, type LocalCluster } from './support/redis-cluster.js';

const RUN = 'cluster-sweep';

/** The value of one sample line `name{labels} value` in Prometheus text. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describeWith(
  [commandNeed('redis-server', 'redis-server'), commandNeed('redis-cli', 'redis-tools'), bwrapNeed()],
  'a three-master Redis Cluster with the default {rf} prefix',
  () => {
    let cluster: LocalCluster;
    let host: Host;
    let env: Record<string, string>;
    let config: Config;
    let redis: RedisClient;
    let workers: Array<ReturnType<typeof spawnWorker>> = [];
    let dashboard: Dashboard | undefined;

    beforeAll(async () => {
      cluster = await startRedisCluster(3);
      host = await startHost();
      // No RF_PREFIX: the default {rf} is what must work on a cluster. The cluster is this test's own.
      env = {
        REDIS_URL: cluster.url,
        LOG_LEVEL: 'warn',
        RF_REAPER_INTERVAL_S: '1',
        RF_BACKOFF_MS: '200',
        ...cloudEnvFor(host.handle),
      };
      config = configOf(env);
      expect(config.queue.prefix).toBe('{rf}');
      redis = createRedis(config.redis);
    });

    afterAll(async () => {
      await Promise.all(workers.map((w) => stopChild(w)));
      await dashboard?.close();
      redis?.disconnect();
      await host?.close();
      await cluster?.close();
    });

    it('is a real cluster: the client is an ioredis Cluster and the slots are spread over three masters', async () => {
      expect(isCluster(redis)).toBe(true);
      expect(isCluster(redis) ? redis.nodes('master') : []).toHaveLength(3);
    });

    it('refuses a prefix without braces before touching Redis, with the fix', async () => {
      const refused = await runCli(['submit', SWEEP, '--run', 'no-tag'], { ...env, RF_PREFIX: 'rf' });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('RF_PREFIX="rf" has no hash tag, but REDIS_URL is a Redis Cluster');
      expect(refused.stderr).toContain('RF_PREFIX={rf}');
      expect(await keysMatching(redis, '*no-tag*')).toEqual([]);
    });

    it('refuses a plain redis:// URL that points at a cluster node, naming the cluster URL to use', async () => {
      const refused = await runCli(['status', '--run', RUN], {
        ...env,
        REDIS_URL: `redis://127.0.0.1:${cluster.ports[0]}`,
      });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('is a node of a Redis Cluster');
      expect(refused.stderr).toContain('redis+cluster://');
    });

    it('runs the examples sweep: CLI submit, two worker processes, CLI results and status, every outcome as expected', async () => {
      const submitted = await runCli(['submit', SWEEP, '--run', RUN], env);
      expect(submitted.stderr).toBe('');
      expect(submitted.code).toBe(0);
      workers = [spawnWorker(env), spawnWorker(env)];

      const followed = await runCli(['results', '--run', RUN, '--follow'], env);
      expect(followed.code, followed.stderr).toBe(0);
      const results = followed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as EpisodeResult);
      const expected = await readExpected();
      expect(results).toHaveLength(Object.keys(expected).length);
      for (const result of results) {
        expect({ id: result.instance_id, status: result.status, resolved: result.resolved }).toEqual({
          id: result.instance_id,
          status: 'completed',
          resolved: expected[result.instance_id]?.resolved,
        });
      }

      const status = await runCli(['status', '--run', RUN, '--json'], env);
      expect(status.code, status.stderr).toBe(0);
      const counts = JSON.parse(status.stdout) as {
        total: number;
        done: number;
        completed: number;
        resolved: number;
        active: number;
      };
      const resolved = Object.values(expected).filter((e) => e.resolved).length;
      expect(counts).toMatchObject({
        total: results.length,
        done: results.length,
        completed: results.length,
        resolved,
        active: 0,
      });

      // Leases were taken and released on the cluster: none is left, and neither is any sandbox.
      const keys = createKeyspace(config.queue.prefix);
      await vi.waitFor(async () => expect(await redis.zcard(keys.leases())).toBe(0));
      await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]));
    });

    it("the workers' reaper kills a sandbox whose lease expired in the cluster", async () => {
      const keys = createKeyspace(config.queue.prefix);
      // A slot taken the way the supply takes one, whose holder then dies: its last renewal is its last word, and
      // Redis expires the lease. (A long TTL while the test sets it up, then a last renewal of 1 ms: a short TTL
      // from the start would race CreateSandbox on a busy machine.)
      const stale = new LeaseStore(redis, keys, { ttlMs: 60_000 });
      const [ticket, owner] = [randomUUID(), randomUUID()];
      expect(
        (await stale.reserve({ ticket, owner, target: 'default', spec: 's', maxLive: 1000, maxStarting: 1000 })).ok,
      ).toBe(true);
      const label = `${ticket}.1`;
      await stale.update(ticket, owner, {
        target: 'default',
        sandbox: '',
        spec: 's',
        fields: { label, worker: 'dead-worker' },
      });
      const created = await host.target.vefaas.createSandbox({
        FunctionId: host.target.functionId,
        Timeout: 60,
        InstanceImageInfo: { Image: 'pyutils', Command: 'python3 -m swerex.server --auth-token t', Port: 8000 },
        Metadata: { [FLEET_LABEL_KEY]: await ensureFleetId(redis, keys), [AGENT_ENV_LABEL_KEY]: label },
      });
      const sandboxId = created.SandboxId;
      expect(
        await stale.update(ticket, owner, { target: 'default', sandbox: sandboxId, spec: 's', leaveStarting: true }),
      ).toBe(true);
      expect(await new LeaseStore(redis, keys, { ttlMs: 1 }).renew(ticket, owner)).toBe(true);
      await vi.waitFor(
        async () => {
          expect((await fleetSandboxes(host, config)).map((s) => s.id)).not.toContain(sandboxId);
          expect(await redis.zscore(keys.leases(), ticket)).toBeNull();
        },
        { timeout: 20_000, interval: 200 },
      );
    });

    it("dashboard counters read the cluster: queue states, runs, leases and the workers' summed metrics", async () => {
      dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: silentLogger });
      const expected = await readExpected();
      const total = Object.keys(expected).length;
      await vi.waitFor(
        async () => {
          const text = await (await fetch(new URL('/metrics', dashboard!.url))).text();
          expect(sample(text, `rf_queue_jobs{queue="${config.queue.name}",state="completed"}`)).toBe(total);
          expect(sample(text, 'rf_runs_known')).toBe(1);
          expect(sample(text, 'rf_fleet_sandboxes{state="live"}')).toBe(0);
          expect(sample(text, 'rf_workers_reporting')).toBe(2);
          expect(sample(text, 'rf_episodes_total{outcome="resolved"}')).toBe(
            Object.values(expected).filter((e) => e.resolved).length,
          );
          expect(sample(text, 'rf_reaper_kills_total{reason="lease-expired"}')).toBe(1);
        },
        { timeout: 20_000, interval: 500 },
      );
      const run = (await (await fetch(new URL(`/api/runs/${RUN}`, dashboard.url))).json()) as {
        done: number;
        total: number;
      };
      expect(run).toMatchObject({ done: total, total });
    });

    it('cancel works on the cluster', async () => {
      const cancelled = await runCli(['cancel', '--run', RUN], env);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      const status = JSON.parse((await runCli(['status', '--run', RUN, '--json'], env)).stdout) as {
        cancelled: boolean;
      };
      expect(status.cancelled).toBe(true);
    });
  },
);
