/**
 * `rollout-fleet dashboard`: serves Bull Board for the fleet's queues plus /metrics, /api/runs and /runs
 * until SIGINT/SIGTERM, then exits 0. Configuration (Redis, queue prefix, credentials, read-only,
 * metrics-public) comes from the environment / .env via loadConfig. Prints the URL on stdout; logs go to
 * stderr. Never prints a credential.
 */
import type { Command } from 'commander';
import { EXIT } from '../exit-codes.js';
import { portNumber } from '../runtime/option-parsers.js';

interface DashboardFlags {
  port: number;
  host: string;
}

export function registerDashboard(program: Command): void {
  program
    .command('dashboard')
    .description('Serve Bull Board, Prometheus /metrics and run pages for the fleet (auth from RF_DASHBOARD_*).')
    .option('--port <n>', 'port to listen on (0 = any free port)', portNumber, 3000)
    .option('--host <addr>', 'address to bind; a non-loopback address requires credentials', '127.0.0.1')
    .action(async (flags: DashboardFlags) => {
      process.exitCode = await runDashboard(flags);
    });
}

async function runDashboard(flags: DashboardFlags): Promise<number> {
  const { RolloutError, createLogger, loadConfig } = await import('@rollout-fleet/shared');
  const { startDashboard } = await import('@rollout-fleet/api/dashboard');
  // Loaded before anything is announced: whoever reads the URL may signal us at once.
  const { untilStopSignal } = await import('../runtime/shutdown.js');
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    return EXIT.INVALID_INPUT;
  }
  const { user, password, token } = config.dashboard;
  const logger = createLogger({
    ...config.log,
    destination: process.stderr,
    secrets: [password, token, user],
    name: 'dashboard',
  });

  let dashboard;
  try {
    // A dashboard started without its Redis would serve empty pages and log a connection error every second:
    // say so once and stop, as the worker and the API do.
    const { connectRedis } = await import('../runtime/redis.js');
    (await connectRedis(config.redis)).disconnect();
    dashboard = await startDashboard({ config, port: flags.port, host: flags.host, logger });
  } catch (err) {
    console.error(`dashboard: ${(err as Error).message}`);
    return err instanceof RolloutError && err.code === 'CONFIG_INVALID' ? EXIT.INVALID_INPUT : EXIT.UNAVAILABLE;
  }
  const auth =
    token !== undefined
      ? ' (bearer token or basic auth)'
      : user !== undefined
        ? ' (basic auth)'
        : ' (no authentication: loopback only)';
  console.log(`dashboard: ${dashboard.url}${auth}\n  runs: ${dashboard.url}runs   metrics: ${dashboard.url}metrics`);

  await untilStopSignal(logger, { message: 'dashboard: stopping' });
  await dashboard.close();
  return EXIT.OK;
}
