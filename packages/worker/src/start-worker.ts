/**
 * A worker process's fleet member: a BullMQ Worker running the episode processor, plus the reaper
 * loop (one pass at a time fleet-wide) and the metrics publisher. `close()` is the graceful path
 * used on SIGTERM/SIGINT: stop taking jobs, let running episodes finish within the grace period,
 * then hand the rest back (their sandboxes are killed on the way out).
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { Queue, Worker } from 'bullmq';
import {
  ResultStore,
  abortableDelay,
  createKeyspace,
  createRedis,
  jobSecrets,
  requeuePendingReruns,
  requeueWhenFinished,
  scrubFromLogs,
  type Config,
  type EpisodeJobData,
  type EpisodeJobReturn,
  type Logger,
} from '@rollout-fleet/shared';
import {
  prepareToolBundleUpload,
  createProcessReaper,
  createSandboxSupply,
  supplyLimitsFrom,
  WarmPool,
  type Reaper,
  type SandboxSupply,
  type VefaasTarget,
} from '@rollout-fleet/sandbox';
import { EpisodeWatch } from './episode/episode-watch.js';
import { reconcileFailedJobs } from './jobs/reconcile-failed-jobs.js';
import { settleFailedJob } from './jobs/settle-failed-job.js';
import { checkWorkerHealth, type WorkerHealth, type WorkerState } from './health/worker-health.js';
import { publishMetrics, unpublishMetrics } from './metrics/metrics-publisher.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics/worker-metrics.js';
import { InflightLimiter } from './policy/inflight-limiter.js';
import { createProcessor } from './processor.js';
import { createLossLedger } from './losses/loss-ledger.js';
import { repeatEvery as every } from '@rollout-fleet/shared';
import { RunActivity } from './episode/run-activity.js';
import { StragglerPolicy } from './episode/stragglers.js';
import type { SupplyTarget } from '@rollout-fleet/sandbox';

const SECOND_MS = 1000;
const METRICS_INTERVAL_MS = 5 * SECOND_MS;
/** A worker counts as alive (its running episodes in the run counters) while this key lives; renewed every 5 s. */
const WORKER_ALIVE_TTL_MS = 30 * SECOND_MS;

export interface StartWorkerOptions {
  config: Config;
  /** Where sandboxes are created (one target named `default`), unless `targets` is given. */
  target: VefaasTarget;
  /** Several sandbox targets (functions/routes, e.g. two regions) with weights; overrides `target`. */
  targets?: readonly SupplyTarget[];
  logger: Logger;
  /** @defaultValue config.worker.concurrency */
  concurrency?: number;
  /** @defaultValue `<hostname>-<pid>-<random>` */
  workerId?: string;
  /**
   * Reads the environment variable a policy episode names in `policy.api_key_env` (its endpoint key). The CLI
   * passes the process environment; without it, episodes that name a key fail as POLICY_KEY_MISSING.
   */
  secret?: (name: string) => string | undefined;
}

export interface RunningWorker {
  readonly workerId: string;
  readonly worker: Worker<EpisodeJobData, EpisodeJobReturn>;
  readonly metrics: WorkerMetrics;
  readonly reaper: Reaper;
  /** The fleet's sandbox supply as this process uses it. */
  readonly supply: SandboxSupply;
  readonly warmPool: WarmPool;
  /** Readiness: running and not stopping, and Redis answers (for `--health-port` and orchestrators). */
  health(): Promise<WorkerHealth>;
  /** Graceful stop; resolves when every episode has finished or been handed back. Idempotent. */
  close(): Promise<void>;
}

export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const { config, target, logger: rootLogger } = options;
  const workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const logger = rootLogger.child({ workerId });
  const keys = createKeyspace(config.queue.prefix);
  // Commands of a long-lived worker must ride out a Redis failover instead of failing an episode.
  const redis = createRedis(config.redis, { role: 'blocking', connectionName: `rf-worker:${workerId}` });
  const metrics = createWorkerMetrics();
  // Every SWE-ReX answer is read with the configured cap (a 500 MB output must not exhaust this process).
  const capped = (t: VefaasTarget): VefaasTarget => ({
    ...t,
    maxResponseBytes: t.maxResponseBytes ?? config.worker.swerexMaxResponseBytes,
  });
  const targets = (options.targets ?? [{ id: 'default', target }]).map((t) => ({ ...t, target: capped(t.target) }));
  const supply = await createSandboxSupply({
    redis,
    keys,
    targets,
    workerId,
    logger,
    limits: supplyLimitsFrom(config),
    metrics,
  });
  const shutdown = new AbortController();
  // Every running episode listens to it (linkedAbort in the processor): concurrency 1,000 is no listener leak.
  setMaxListeners(0, shutdown.signal);
  const activity = new RunActivity(redis, keys, workerId);
  await activity.heartbeat(WORKER_ALIVE_TTL_MS);
  const results = new ResultStore(redis, keys, { retentionS: config.worker.resultRetentionDays * 24 * 60 * 60 });
  const watch = new EpisodeWatch({ redis, keys, logger, intervalMs: config.worker.cancelPollMs });

  const processor = createProcessor({
    activity,
    ...(config.supply.stragglers
      ? {
          stragglers: new StragglerPolicy(redis, keys, {
            tailFraction: config.supply.stragglerTail,
            factor: config.supply.stragglerFactor,
          }),
        }
      : {}),
    supply,
    metrics,
    workerId,
    outputLimitBytes: config.worker.stepOutputLimitBytes,
    episodeOutputLimitBytes: config.worker.episodeOutputLimitBytes,
    artifactsDir: config.worker.artifactsDir,
    freshEval: config.worker.freshEval,
    integrity: config.worker.integrity,
    reward: { resolved: config.worker.rewardResolved, unresolved: config.worker.rewardUnresolved },
    policy: {
      limiter: new InflightLimiter(redis, keys, { limit: config.policy.maxInflight, logger }),
      backoffMs: config.policy.backoffMs,
      secret: options.secret ?? (() => undefined),
    },
    redis,
    keys,
    results,
    logger,
    shutdown: shutdown.signal,
    watch,
    lossLedger: createLossLedger(redis, keys, {
      windowS: config.worker.outageWindowS,
      cleanLosses: config.worker.outageCleanLosses,
    }),
  });

  // Zipped once per process and blocking the event loop while it zips: done before jobs arrive, not amid the first
  // sandboxes' set-ups. Best effort: a bundle that cannot be read fails the set-ups that need it, as before.
  await prepareToolBundleUpload().catch((err: unknown) =>
    logger.warn({ err }, 'could not prepare the tool bundle upload; the first sandbox will'),
  );
  // BullMQ leaves connections it did not create open on close(); we own this one and close it ourselves.
  // BullMQ requires maxRetriesPerRequest: null on a worker's connection: the 'blocking' role.
  const workerConnection = createRedis(config.redis, {
    role: 'blocking',
    connectionName: `rf-worker-queue:${workerId}`,
  });
  // While a job runs, its secret values (sandbox env, secret fields) are cut out of every line this process logs,
  // whichever module writes it: an error can quote the command that exported them.
  const scrubbingProcessor: typeof processor = async (job, token, signal) => {
    const release = scrubFromLogs(logger, jobSecrets(job.data));
    try {
      return await processor(job, token, signal);
    } finally {
      release();
    }
  };
  const worker = new Worker<EpisodeJobData, EpisodeJobReturn>(config.queue.name, scrubbingProcessor, {
    connection: workerConnection,
    prefix: config.queue.prefix,
    concurrency: options.concurrency ?? config.worker.concurrency,
    // The lock is renewed every half lockDuration while an episode runs, so episodes may last hours;
    // a SIGKILLed worker's job is taken over after about lockDuration + stalledInterval.
    lockDuration: config.worker.lockDurationMs,
    stalledInterval: config.worker.stalledIntervalMs,
    maxStalledCount: 2,
  });
  worker.on('error', (err) => logger.error({ err }, 'worker error'));
  // Lost lock, stop paying: the attempt aborts (its sandboxes are killed on the way out) and writes nothing.
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) {
      logger.warn({ jobId }, 'job lock renewal failed: stopping the attempt');
      // The processor reads any abort of its job signal as JOB_LOCK_LOST (the only reason we cancel jobs).
      worker.cancelJob(jobId, `the lock of job ${jobId} could not be renewed; another worker may run it`);
    }
  });
  const reconcileConnection = createRedis(config.redis, {
    role: 'blocking',
    connectionName: `rf-worker-reconcile:${workerId}`,
  });
  const reconcileQueue = new Queue<EpisodeJobData>(config.queue.name, {
    connection: reconcileConnection,
    prefix: config.queue.prefix,
  });
  // Every finished job gets exactly one result, also one BullMQ failed without calling the processor.
  worker.on('failed', (job, err) => {
    const release = scrubFromLogs(logger, job ? jobSecrets(job.data) : []);
    logger.debug({ jobId: job?.id, err }, 'job failed');
    if (job)
      void settleWithRetries(() => settleFailedJob({ results, workerId }, job, err), logger, job.id).finally(release);
    else release();
  });
  // A job forced or retried as it finished goes back in the queue (requeue-rerun.ts); the sweep below is the backstop.
  const reruns = { queue: reconcileQueue, redis, keys };
  requeueWhenFinished(worker, reruns, (jobId, err) =>
    logger.warn({ err, jobId }, 'could not put back a forced job that finished; the sweep will'),
  );

  const reaperIntervalMs = config.worker.reaperIntervalS * SECOND_MS;
  const reaping = createProcessReaper({
    config,
    redis,
    keys,
    leases: supply.leases,
    fleetId: supply.fleetId,
    targets,
    logger,
    onKill: (reason) => metrics.reaperKills.inc({ reason }),
  });
  // Not on `redis`: a BullMQ Queue defines its ~100 scripts on the connection it is given, and ioredis then copies
  // every one of them onto each `redis.pipeline()` (the job-log writer makes several a second: ~45 MB of promoted
  // garbage in 16 s at concurrency 1,000, bench:concurrency). The reconciler's connection already carries them.
  const lookahead = new Queue(config.queue.name, { connection: reconcileConnection, prefix: config.queue.prefix });
  const warmPool = new WarmPool({
    supply,
    redis,
    keys,
    queue: lookahead,
    logger: logger.child({ component: 'warm-pool' }),
    maxSize: config.supply.warmPoolMax,
    idleMs: config.supply.warmIdleS * SECOND_MS,
    lookahead: config.supply.warmLookahead,
    intervalMs: config.supply.warmIntervalMs,
    metrics: metrics.supply,
  });
  warmPool.start();
  metrics.warmPoolMax.set(config.supply.warmPoolMax);
  const publish = async (): Promise<void> => {
    metrics.process.sample();
    await publishMetrics(redis, keys, workerId, metrics.registry);
  };
  // A first snapshot now, not in 5 s: until it exists, `status` and `submit --announce` do not see this worker.
  await publish().catch((err: unknown) => logger.warn({ err }, 'metrics publish failed'));
  const loops = [
    reaping.start(),
    every(METRICS_INTERVAL_MS, publish, logger, 'metrics publish failed'),
    every(METRICS_INTERVAL_MS, () => activity.heartbeat(WORKER_ALIVE_TTL_MS), logger, 'worker heartbeat failed'),
    every(reaperIntervalMs, () => activity.sweep(), logger, 'run counter sweep failed'),
    every(
      reaperIntervalMs,
      () => reconcileFailedJobs({ queue: reconcileQueue, redis, keys, results, logger, workerId }),
      logger,
      'reconciler pass failed',
    ),
    every(
      reaperIntervalMs,
      () =>
        requeuePendingReruns({
          ...reruns,
          onError: (label, err) => logger.warn({ err, label }, 'rerun sweep: could not put back a job'),
        }),
      logger,
      'rerun sweep failed',
    ),
  ];
  logger.info(
    { concurrency: worker.opts.concurrency, queue: config.queue.name, fleetId: supply.fleetId },
    'worker started',
  );

  let state: WorkerState = 'running';
  const health = (): Promise<WorkerHealth> =>
    checkWorkerHealth({ state: state === 'running' && !worker.isRunning() ? 'stopped' : state, redis });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      state = 'stopping';
      logger.info({ graceS: config.worker.shutdownGraceS }, 'worker stopping: no new episodes');
      const grace = setTimeout(() => shutdown.abort(), config.worker.shutdownGraceS * SECOND_MS);
      grace.unref();
      await worker.close();
      clearTimeout(grace);
      await warmPool.stop();
      await lookahead.close();
      await supply.releaseAll();
      await supply.close();
      for (const stop of loops) stop();
      metrics.process.stop();
      watch.close();
      await reconcileQueue.close().catch(() => undefined);
      reconcileConnection.disconnect();
      await unpublishMetrics(redis, keys, workerId).catch(() => undefined);
      await activity.leave().catch(() => undefined);
      workerConnection.disconnect();
      redis.disconnect();
      state = 'stopped';
      logger.info('worker stopped');
    })();
    return closing;
  };
  return { workerId, worker, metrics, reaper: reaping.reaper, supply, warmPool, health, close };
}

/** A few tries with back-off (a Redis blip); what still fails is left to the reconciler. */
async function settleWithRetries(
  settle: () => Promise<unknown>,
  logger: Logger,
  jobId: string | undefined,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await settle();
      return;
    } catch (err) {
      if (attempt >= 3) {
        logger.warn({ err, jobId }, 'could not write the result of a failed job; the reconciler will');
        return;
      }
      await abortableDelay(250 * 2 ** attempt);
    }
  }
}
