/**
 * `rollout-fleet worker`: one fleet member. Run as many as wanted, on as many hosts as wanted; they share
 * the queue through Redis. SIGTERM/SIGINT: stop taking jobs, let running episodes finish within the grace
 * period (RF_SHUTDOWN_GRACE_S), hand the rest back, kill their sandboxes, exit 0. `--health-port` serves
 * /healthz (liveness) and /readyz (readiness: running, not stopping, Redis answers) for orchestrators.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import type { RunningWorker } from '@rollout-fleet/worker';
import { EXIT } from '../exit-codes.js';
import { portNumber, positiveInteger } from '../runtime/option-parsers.js';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('Take episodes from the queue and run them in sandboxes until SIGTERM/SIGINT.')
    .option('--concurrency <n>', 'episodes at once in this process (default RF_WORKER_CONCURRENCY)', positiveInteger)
    .option(
      '--fresh-eval',
      'grade each patch in a new sandbox of the same image, as SWE-bench does (the default; RF_FRESH_EVAL)',
    )
    .option(
      '--in-place-eval',
      'UNSAFE: grade in the sandbox the trajectory ran in, which an adversarial policy can rig (RF_FRESH_EVAL=false)',
    )
    .option(
      '--health-port <n>',
      'serve GET /healthz (liveness) and /readyz (readiness) on this port (0 = any free port)',
      portNumber,
    )
    .option('--health-host <addr>', 'address of the health endpoint (a Kubernetes pod uses 0.0.0.0)', '127.0.0.1')
    .addHelpText(
      'after',
      '\nHealth: /readyz answers 503 while the worker stops or Redis does not answer; the URL is logged at start.' +
        '\nExit codes: 0 stopped cleanly, 3 invalid configuration, 4 Redis or veFaaS unreachable.',
    )
    .action(async (flags: WorkerFlags) => {
      process.exitCode = await runWorker(flags);
    });
}

interface WorkerFlags {
  concurrency?: number;
  freshEval?: boolean;
  inPlaceEval?: boolean;
  healthPort?: number;
  healthHost: string;
}

async function runWorker(flags: WorkerFlags): Promise<number> {
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  try {
    const context = loadContext();
    const { logger } = context;
    // Before the episodes' heap exists: V8 reads this at every major collection (RF_WORKER_HEAP_GROWTH_PERCENT).
    const growth = context.config.worker.heapGrowthPercent;
    if (growth > 0) setFlagsFromString(`--heap-growing-percent=${growth}`);
    if (flags.freshEval && flags.inPlaceEval) {
      console.error('worker: --fresh-eval and --in-place-eval contradict each other; give one');
      return EXIT.USAGE;
    }
    const freshEval = flags.inPlaceEval ? false : flags.freshEval ? true : context.config.worker.freshEval;
    const config = { ...context.config, worker: { ...context.config.worker, freshEval } };
    if (!freshEval)
      logger.warn(
        "grading in the agent's own sandbox (in-place): a policy can rig its own grade; see docs/adversarial-grading.md",
      );
    const { connectRedis } = await import('../runtime/redis.js');
    (await connectRedis(config.redis)).disconnect();
    const { openTarget } = await import('../runtime/target.js');
    const { processWorkerOptions } = await import('../runtime/worker-options.js');
    const { startHealthServer, startWorker } = await import('@rollout-fleet/worker');
    const { RolloutError } = await import('@rollout-fleet/shared');
    // Loaded before anything is announced: whoever reads the log may signal us at once.
    const { serveUntilStopped } = await import('../runtime/shutdown.js');
    // First, so a taken port fails before anything starts; up until the process exits, so readiness reads
    // "starting" and then "stopping" around the worker's life.
    const started: { worker?: RunningWorker } = {};
    const health =
      flags.healthPort === undefined
        ? undefined
        : await startHealthServer({
            port: flags.healthPort,
            host: flags.healthHost,
            readiness: async () =>
              started.worker?.health() ?? { ready: false, worker: 'starting', redis: 'not checked (starting)' },
            logger,
          }).catch((err: unknown) => {
            throw new RolloutError(
              'CONFIG_INVALID',
              `cannot serve the health endpoint on ${flags.healthHost}:${flags.healthPort}: ${(err as Error).message}`,
              { cause: err },
            );
          });
    if (health) logger.info({ url: health.url }, `health endpoint ${health.url}healthz, ${health.url}readyz`);
    const opened = await openTarget(config, logger);
    logger.info(`sandboxes from ${opened.description}`);
    // The budget bin/worker-heap.js gave this worker (RF_WORKER_HEAP_MB), as V8 reports it: old + young generation.
    const heapLimitMb = Math.round(getHeapStatistics().heap_size_limit / 2 ** 20);
    logger.info(
      { heapLimitMb, heapGrowthPercent: growth },
      `V8 heap limit ${heapLimitMb} MB, growth between major collections ${growth > 0 ? `${growth} %` : "V8's own"}`,
    );
    const running = await startWorker({
      config,
      ...processWorkerOptions(opened),
      logger,
      ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
    });
    started.worker = running;
    return await serveUntilStopped(logger, {
      message: 'shutting down (send again to force)',
      forceMessage: 'forced exit: sandboxes of running episodes are left to the reaper',
      close: [() => running.close(), () => health?.close(), () => opened.close()],
    });
  } catch (err) {
    return reportFailure('worker', err);
  }
}
