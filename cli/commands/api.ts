/**
 * `rollout-fleet api`: serves the HTTP API (v1: runs, result and group streams, remote sessions) until
 * SIGINT/SIGTERM, then ends its sessions (their sandboxes are killed) and exits 0. Sessions get their sandboxes
 * from the configured target (real veFaaS, or an embedded vefaas-local). `--worker` also runs a worker in this
 * process on the same target: one command for a whole local fleet. Prints the URL on stdout; logs go to stderr.
 */
import type { Command } from 'commander';
import { portNumber, positiveInteger } from '../runtime/option-parsers.js';

interface ApiFlags {
  port: number;
  host: string;
  worker: boolean;
  concurrency?: number;
}

export function registerApi(program: Command): void {
  program
    .command('api')
    .description(
      'Serve the HTTP API for trainers: submit runs, stream results and RL groups, remote sandbox sessions (docs/openapi.json).',
    )
    .option('--port <n>', 'port to listen on (0 = any free port)', portNumber, 8788)
    .option('--host <addr>', 'address to bind; a non-loopback address requires RF_API_TOKEN', '127.0.0.1')
    .option('--worker', 'also run a worker in this process, on the same sandbox target', false)
    .option('--concurrency <n>', 'with --worker: episodes at once (default RF_WORKER_CONCURRENCY)', positiveInteger)
    .addHelpText(
      'after',
      '\nAuth: Authorization: Bearer <RF_API_TOKEN> on every route; without RF_API_TOKEN, loopback only.' +
        '\nExit codes: 0 stopped cleanly, 3 invalid configuration (e.g. a public address without a token), 4 Redis or veFaaS unreachable.',
    )
    .action(async (flags: ApiFlags) => {
      process.exitCode = await runApi(flags);
    });
}

async function runApi(flags: ApiFlags): Promise<number> {
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  try {
    const { config, logger } = loadContext();
    const { connectRedis } = await import('../runtime/redis.js');
    (await connectRedis(config.redis)).disconnect();
    const { openTarget } = await import('../runtime/target.js');
    const { processWorkerOptions } = await import('../runtime/worker-options.js');
    const { startApi } = await import('@rollout-fleet/api');
    const { startWorker } = await import('@rollout-fleet/worker');
    // Loaded before anything is announced: whoever reads the banner may signal us at once.
    const { serveUntilStopped } = await import('../runtime/shutdown.js');
    const opened = await openTarget(config, logger);
    logger.info(`sandboxes from ${opened.description}`);
    let api;
    try {
      api = await startApi({
        config,
        port: flags.port,
        host: flags.host,
        logger,
        target: opened.target,
        targets: opened.targets,
      });
    } catch (err) {
      await opened.close();
      throw err;
    }
    const worker = flags.worker
      ? await startWorker({
          config,
          ...processWorkerOptions(opened),
          logger,
          ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
        })
      : undefined;
    const auth = config.api.token === undefined ? 'no token: loopback only' : 'bearer token (RF_API_TOKEN)';
    console.log(
      `api: ${api.url} (${auth})${worker ? `, with a worker (${worker.workerId})` : ''}\n  openapi: docs/openapi.json`,
    );
    return await serveUntilStopped(logger, {
      message: 'api: stopping',
      close: [() => api.close(), () => worker?.close(), () => opened.close()],
    });
  } catch (err) {
    return reportFailure('api', err);
  }
}
