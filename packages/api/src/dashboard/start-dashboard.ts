/**
 * `rollout-fleet dashboard`: Bull Board for the fleet's queues, plus /metrics, /api/runs and /runs pages,
 * all behind one authentication layer (see ../http/auth.ts, shared with the API) and one CSRF guard for writes (../http/csrf.ts). Job data is
 * shown through the shared redaction (redacting-adapter.ts): no sandbox env value or other secret is displayed.
 * Routes:
 *   /healthz                       200 {ok, redis} | 503 when Redis does not answer (no authentication)
 *   /metrics                       Prometheus text (public only with RF_METRICS_PUBLIC)
 *   /api/runs, /api/runs/<id>      JSON run summaries          /runs, /runs/<id>   HTML run pages
 *   / and the rest                 Bull Board (UI, /static assets, /api/queues...)
 */
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'bullmq';
import type { NextFunction, Request, Response, Router } from 'express';
import {
  createKeyspace,
  createRedis,
  type Config,
  type EpisodeJobData,
  type Logger,
  type RedisClient,
} from '@rollout-fleet/shared';
import { checkRedis } from '@rollout-fleet/worker';
import { createDashboardAuth } from '../http/auth.js';
import { createHttpApp, httpGate, listenHttp } from '../http/http-server.js';
import { createDashboardMetrics } from './dashboard-metrics.js';
import { RedactingBullMQAdapter } from './redacting-adapter.js';
import { episodeViewerPath, runRoutes } from './run-routes.js';

export interface StartDashboardOptions {
  /** From `loadConfig`: redis.url, queue.prefix/name and the dashboard section are used. */
  config: Config;
  /** 0 picks a free port. */
  port: number;
  /** Bind address. A non-loopback address requires credentials. */
  host: string;
  logger: Logger;
  /** Redis for run keys and metrics; created from config.redis (and closed on close) when omitted. */
  redis?: RedisClient;
  /** Further queues shown in Bull Board, besides config.queue.name (always shown). */
  queueNames?: readonly string[];
  /** Worker metric snapshots older than this are dropped from /metrics. @defaultValue 30 s */
  metricsStaleAfterMs?: number;
}

export interface Dashboard {
  /** `http://host:port/` (Bull Board's home). */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function startDashboard(options: StartDashboardOptions): Promise<Dashboard> {
  const { config, host, logger } = options;
  // Throws before anything is opened when the address needs credentials and none are set.
  const auth = createDashboardAuth({ dashboard: config.dashboard, host, logger });
  const keys = createKeyspace(config.queue.prefix);
  const ownRedis = options.redis === undefined;
  const redis = options.redis ?? createRedis(config.redis, { connectionName: 'rf-dashboard' });
  // The episodes queue is always shown (run status reads it); extra names add the fleet's other queues.
  const queueNames = [...new Set([config.queue.name, ...(options.queueNames ?? [])])];
  // One connection for every queue shown (a Queue never blocks on it); BullMQ leaves a given connection open on close.
  const queueConnection = createRedis(config.redis, { connectionName: 'rf-dashboard-queues' });
  const queues = queueNames.map((name) => {
    const queue = new Queue<EpisodeJobData>(name, { connection: queueConnection, prefix: config.queue.prefix });
    queue.on('error', (err) => logger.warn({ err, queue: name }, 'dashboard: queue connection error'));
    return queue;
  });
  const episodes = queues[0] as Queue<EpisodeJobData>;
  const closeAll = async (): Promise<void> => {
    await Promise.allSettled(queues.map((q) => q.close()));
    queueConnection.disconnect();
    if (ownRedis) redis.disconnect();
  };

  const board = new ExpressAdapter();
  board.setBasePath('/');
  createBullBoard({
    // Job data is shown redacted (sandbox env values, tokens, keys): see redacting-adapter.ts. The job card links to
    // the episode viewer (steps, observations, diffs, grading) of its result.
    queues: queues.map(
      (q) =>
        new RedactingBullMQAdapter(q, {
          readOnlyMode: config.dashboard.readOnly,
          description: `prefix ${config.queue.prefix}`,
          externalJobUrl: (job) => ({ displayText: 'Episode viewer', href: episodeViewerPath(String(job.id ?? '')) }),
        }),
    ),
    serverAdapter: board,
    options: {
      uiConfig: {
        boardTitle: 'rollout-fleet',
        miscLinks: [
          { text: 'Runs', url: '/runs' },
          { text: 'Metrics', url: '/metrics' },
        ],
      },
    },
  });
  const metrics = createDashboardMetrics({ redis, keys, queues, staleAfterMs: options.metricsStaleAfterMs });

  const app = createHttpApp({
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'same-origin',
  });
  const serveMetrics = async (_req: Request, res: Response): Promise<void> => {
    const text = await metrics.render();
    res.setHeader('Content-Type', metrics.contentType).send(text);
  };
  // For load balancers and Kubernetes probes, before authentication: says only whether Redis answers.
  app.get('/healthz', async (_req: Request, res: Response) => {
    const redisState = await checkRedis(redis);
    res.status(redisState === 'ok' ? 200 : 503).json({ ok: redisState === 'ok', redis: redisState });
  });
  if (config.dashboard.metricsPublic) app.get('/metrics', serveMetrics);
  app.use(httpGate(auth, logger));
  if (!config.dashboard.metricsPublic) app.get('/metrics', serveMetrics);
  app.use(runRoutes({ redis, keys, queue: episodes }));
  app.use('/', board.getRouter() as Router);
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    logger.error({ err, method: req.method, path: req.path }, 'dashboard: request failed');
    if (!res.headersSent) res.status(500).type('text/plain').send('Internal error\n');
  });

  const listener = await listenHttp(app, { component: 'dashboard', host, port: options.port, onFailure: closeAll });
  const { port } = listener;
  const url = `${listener.url}/`;
  logger.info(
    {
      url,
      auth: auth.mode,
      readOnly: config.dashboard.readOnly,
      metricsPublic: config.dashboard.metricsPublic,
      queues: queueNames,
    },
    'dashboard listening',
  );

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close: () => {
      closing ??= (async () => {
        await listener.close();
        await closeAll();
      })();
      return closing;
    },
  };
}
