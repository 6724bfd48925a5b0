/**
 * The pipeline as the benchmarks drive it: an embedded vefaas-local, Redis (REDIS_URL, else 127.0.0.1:6379,
 * else a throwaway redis-server), a queue under a unique prefix, workers in this process or as child
 * processes (`rollout-fleet worker`, pointed at the host "as the cloud", as `npm run demo` does), and a
 * cleanup that leaves no key, worker or sandbox behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import {
  EpisodeSchema,
  ResultStore,
  createKeyspace,
  createLogger,
  createRedis,
  deleteKeysMatching,
  findRedis,
  loadConfig,
  type Config,
  type Episode,
  type EpisodeInput,
  type EpisodeJobData,
  type EpisodeResult,
  type FoundRedis,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { closeSharedDispatchers, createVefaasClient, type VefaasClient } from '@rollout-fleet/sandbox';
import { submitRun } from '@rollout-fleet/producer';
import {
  startVefaasLocal,
  type HostIsolation,
  type VefaasLocalHandle,
  type VefaasLocalOptions,
} from '@rollout-fleet/vefaas-local';
import { aggregateFleetMetrics, startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { startHostProcess, type HostInfo, type HostProcess } from './host-process.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
export const IMAGES_DIR = `${root}examples/images`;
/** A tiny image (one README): copying it into /testbed costs next to nothing. */
export const SMALL_IMAGE = 'python';
const SHUTDOWN_GRACE_S = 10;

/** The host as the fleet sees it: vefaas-local in this process (default) or in its own (`hostProcess`). */
export interface BenchFleet<H extends HostInfo = VefaasLocalHandle> {
  host: H;
  vefaas: VefaasClient;
  redis: RedisClient;
  keys: Keyspace;
  config: Config;
  queue: Queue<EpisodeJobData>;
  /** Process ids of the worker child processes. */
  workerPids(): number[];
  /** Starts `count` workers of `concurrency` episodes each and waits until all are listening on the queue. */
  /**
   * `secrets`: environment variables policy episodes name for their endpoint key (`policy.api_key_env`), given to
   * child processes as environment and to in-process workers as their secret lookup.
   */
  startWorkers(o: {
    count: number;
    concurrency: number;
    processes: boolean;
    secrets?: Record<string, string>;
  }): Promise<void>;
  /** Enqueues the episodes and waits for every result (or the timeout); times are from just before the first enqueue. */
  submitAndWait(o: { runId: string; episodes: Episode[]; timeoutMs: number }): Promise<RunOutcome>;
  /** Enqueues the episodes only. */
  submit(o: { runId: string; episodes: Episode[] }): Promise<void>;
  /** Waits for `count` results of a run already submitted (or the timeout); times from `startedAt`. */
  waitFor(o: { runId: string; count: number; timeoutMs: number; startedAt: number }): Promise<RunOutcome>;
  /**
   * The workers' supply counters summed over the fleet, from their next metrics snapshots (published every 5 s):
   * `name{labels}` → value, for the counters (and histograms: `name_bucket{le=…}`, `name_sum`, `name_count`)
   * whose name starts with one of `prefixes`.
   */
  fleetCounters(prefixes: readonly string[]): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export interface RunOutcome {
  results: EpisodeResult[];
  /** false when the timeout cut the wait short (results then holds what arrived). */
  complete: boolean;
  /** Epoch ms just before submitRun. */
  startedAt: number;
  /** Epoch ms (Redis server clock, same machine) of the last result's commit: its results-stream id. */
  lastCommitAt: number;
  /** Epoch ms when submitRun returned (every job enqueued). */
  enqueuedAt: number;
}

export function benchEpisode(o: { runId: string; episodeId: string; steps: number; image?: string }): Episode {
  const input: EpisodeInput = {
    run_id: o.runId,
    episode_id: o.episodeId,
    instance_id: o.episodeId,
    sandbox: { image: o.image ?? SMALL_IMAGE },
    trajectory: Array.from({ length: o.steps }, () => ({ name: 'execute_bash', arguments: { command: 'true' } })),
  };
  return EpisodeSchema.parse(input);
}

export interface BenchFleetOptions {
  isolation: HostIsolation;
  /** More vefaas-local options (faults, cold-start timeout, ...). */
  host?: Omit<VefaasLocalOptions, 'isolation' | 'imagesDir'>;
  /** Extra configuration for every worker (in-process and child processes alike), e.g. RF_FLEET_* limits. */
  env?: Record<string, string>;
  /** Node flags for worker child processes that NODE_OPTIONS does not allow (`--cpu-prof`, `--heap-prof`). */
  workerExecArgv?: string[];
  /** Redis to use instead of REDIS_URL / 127.0.0.1:6379 (a private server whose server-wide stats are the run's). */
  redisUrl?: string;
  /**
   * vefaas-local in its own process (`host` then only tells figures through `stats()`); `host` options must then be
   * plain data. The cloud is a separate system: embedded, it answers from the bench's event loop, busy enqueueing.
   */
  hostProcess?: boolean;
}

export async function openBenchFleet(o: BenchFleetOptions & { hostProcess: true }): Promise<BenchFleet<HostProcess>>;
export async function openBenchFleet(o: BenchFleetOptions & { hostProcess?: false }): Promise<BenchFleet>;
export async function openBenchFleet(o: BenchFleetOptions): Promise<BenchFleet<HostProcess | VefaasLocalHandle>> {
  const found: FoundRedis = await findRedis(o.redisUrl ?? process.env.REDIS_URL);
  const hostOptions = { ...o.host, isolation: o.isolation, imagesDir: IMAGES_DIR };
  const host = o.hostProcess ? await startHostProcess(hostOptions) : await startVefaasLocal(hostOptions);
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
  });
  const prefix = `{rf-bench-${randomUUID().slice(0, 8)}}`;
  // A short grace: a benchmark cut short by its timeout must not wait long for in-flight episodes.
  const config = loadConfig(
    {
      REDIS_URL: found.url,
      RF_PREFIX: prefix,
      RF_SHUTDOWN_GRACE_S: String(SHUTDOWN_GRACE_S),
      LOG_LEVEL: 'error',
      ...o.env,
    },
    { dotenvPath: false },
  );
  const keys = createKeyspace(prefix);
  const redis = createRedis(config.redis);
  const queueConnection = redis.duplicate();
  const queue = new Queue<EpisodeJobData>(config.queue.name, { connection: queueConnection, prefix });
  const logger = createLogger({ level: 'error', format: 'json', destination: process.stderr });
  const inProcess: RunningWorker[] = [];
  const children: ChildProcess[] = [];

  const startWorkers: BenchFleet['startWorkers'] = async ({ count, concurrency, processes, secrets = {} }) => {
    const target = { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl };
    for (let i = 0; i < count; i++) {
      if (!processes) {
        inProcess.push(
          await startWorker({
            config,
            target,
            logger,
            concurrency,
            workerId: `bench-${i}`,
            secret: (name) => secrets[name],
          }),
        );
        continue;
      }
      const env = {
        ...process.env,
        REDIS_URL: found.url,
        RF_PREFIX: prefix,
        RF_WORKER_CONCURRENCY: String(concurrency),
        VEFAAS_ENDPOINT: host.controlPlaneUrl,
        VEFAAS_FUNCTION_ROUTE: host.gatewayUrl,
        VEFAAS_FUNCTION_ID: host.functionId,
        VEFAAS_ACCESS_KEY: host.accessKeyId,
        VEFAAS_SECRET_KEY: host.secretAccessKey,
        RF_SHUTDOWN_GRACE_S: String(SHUTDOWN_GRACE_S),
        LOG_LEVEL: 'error',
        ...secrets,
        ...o.env,
      };
      children.push(
        spawn(process.execPath, [...(o.workerExecArgv ?? []), `${root}bin/rollout-fleet.js`, 'worker'], {
          env,
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    }
    // Worker boot (tsx, imports, Redis connections) is not pipeline throughput: start the clock once all listen.
    const deadline = Date.now() + 60_000;
    while ((await queue.getWorkersCount()) < count) {
      if (Date.now() > deadline)
        throw new Error(`only ${await queue.getWorkersCount()} of ${count} workers came up within 60 s`);
      if (children.some((child) => child.exitCode !== null)) throw new Error('a worker process exited during start-up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const submit: BenchFleet['submit'] = async ({ runId, episodes }) => {
    await submitRun({ queue, redis, keys, runId, episodes });
  };

  const waitFor: BenchFleet['waitFor'] = async ({ runId, count, timeoutMs, startedAt }) => {
    const store = new ResultStore(redis, keys);
    const results: EpisodeResult[] = [];
    const signal = AbortSignal.timeout(timeoutMs);
    let lastStreamId = '0-0';
    for await (const item of store.follow(runId, {
      signal,
      blockMs: 500,
      until: async () => results.length >= count,
    })) {
      results.push(item.result);
      lastStreamId = item.streamId;
    }
    const complete = results.length >= count;
    return {
      results,
      complete,
      startedAt,
      enqueuedAt: startedAt,
      lastCommitAt: complete ? Number(lastStreamId.split('-')[0]) : Date.now(),
    };
  };

  const submitAndWait: BenchFleet['submitAndWait'] = async ({ runId, episodes, timeoutMs }) => {
    const startedAt = Date.now();
    await submit({ runId, episodes });
    const enqueuedAt = Date.now();
    return { ...(await waitFor({ runId, count: episodes.length, timeoutMs, startedAt })), enqueuedAt };
  };

  const fleetCounters: BenchFleet['fleetCounters'] = async (prefixes) => {
    const since = Date.now();
    const deadline = since + 12_000;
    // Wait for a snapshot of every worker taken after now, so the counters cover what just ran.
    for (;;) {
      const snapshots = Object.values(await redis.hgetall(keys.metrics())).map(
        (raw) => (JSON.parse(raw) as { at: number }).at,
      );
      if ((snapshots.length > 0 && snapshots.every((at) => at >= since)) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const registry = await aggregateFleetMetrics(redis, keys, { staleAfterMs: 60_000 });
    const out = new Map<string, number>();
    for (const metric of await registry.getMetricsAsJSON()) {
      const type = String(metric.type);
      if ((type !== 'counter' && type !== 'histogram') || !prefixes.some((p) => metric.name.startsWith(p))) continue;
      for (const v of metric.values) {
        // A histogram's values are its buckets (`le`), `_sum` and `_count`, each named by metricName.
        const name = (v as { metricName?: string }).metricName ?? metric.name;
        const labels = Object.entries(v.labels)
          .map(([k, x]) => `${k}=${String(x)}`)
          .join(',');
        out.set(labels ? `${name}{${labels}}` : name, v.value);
      }
    }
    return out;
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      await Promise.all(inProcess.map((worker) => worker.close()));
      for (const child of children) child.kill('SIGTERM');
      await Promise.all(
        children.map((child) =>
          child.exitCode === null && child.signalCode === null ? once(child, 'exit') : undefined,
        ),
      );
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      queueConnection.disconnect();
      await deleteKeysMatching(redis, `rf:${prefix}:*`);
      await deleteKeysMatching(redis, `${prefix}:*`);
      redis.disconnect();
      await vefaas.close();
      await host.close();
      await closeSharedDispatchers();
      await found.close();
    })();
    return closing;
  };

  const workerPids = (): number[] => children.flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
  return {
    host,
    vefaas,
    redis,
    keys,
    config,
    queue,
    workerPids,
    startWorkers,
    submit,
    waitFor,
    submitAndWait,
    fleetCounters,
    close,
  };
}
