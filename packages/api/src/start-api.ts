/**
 * `rollout-fleet api`: the HTTP front door for trainers (v1). Not a second system: runs are submitted,
 * read, cancelled and retried through the producer's own functions over the same Redis keys as the CLI;
 * results and groups stream from the same Redis streams; sessions are sandboxes from the fleet's one sandbox
 * supply (caps, create rate, leases) with an idle timer, and this process also takes its turn at reaping.
 * Auth: `Authorization: Bearer <RF_API_TOKEN>` on every route; without a token, loopback only (the dashboard's
 * rules and code). The OpenAPI document (docs/openapi.json) is generated from the same zod contracts.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { NextFunction, Request, Response } from 'express';
import {
  RolloutError,
  createKeyspace,
  createRedis,
  type Config,
  type EpisodeJobData,
  type Logger,
} from '@rollout-fleet/shared';
import {
  createProcessReaper,
  createSandboxSupply,
  supplyLimitsFrom,
  type SandboxSupply,
  type SupplyTarget,
  type VefaasTarget,
} from '@rollout-fleet/sandbox';
import { apiError, errorBody, sendError } from './http/api-error.js';
import { createHttpAuth } from './http/auth.js';
import { createHttpApp, httpGate, listenHttp } from './http/http-server.js';
import { runRoutes } from './routes/run-routes.js';
import { sessionRoutes } from './routes/session-routes.js';
import { streamRoutes } from './routes/stream-routes.js';
import { SessionManager } from './sessions/session-manager.js';

export interface StartApiOptions {
  /** From `loadConfig`: redis, queue, api, supply, sandbox and worker (lease, reaper) settings are used. */
  config: Config;
  /** 0 picks a free port. */
  port: number;
  /** Bind address; a non-loopback address requires RF_API_TOKEN. */
  host: string;
  logger: Logger;
  /** Where session sandboxes are created (one target named `default`), unless `targets` is given. */
  target: VefaasTarget;
  targets?: readonly SupplyTarget[];
  /** Run the fleet-wide reaper loop in this process too (one pass at a time fleet-wide). @defaultValue true */
  reaper?: boolean;
  /** Stream tuning (tests): keep-alive interval and blocking-read length. */
  streams?: { keepAliveMs?: number; blockMs?: number };
}

export interface ApiServer {
  /** `http://host:port` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  readonly sessions: SessionManager;
  readonly supply: SandboxSupply;
  /** Ends every session (their sandboxes are killed), stops listening, closes connections. Idempotent. */
  close(): Promise<void>;
}

/** Refusals from the shared auth and CSRF code, as API error bodies. */
function denyJson(res: Response, status: 401 | 403, message: string): void {
  res.status(status).json(errorBody(apiError(status === 401 ? 'API_UNAUTHORIZED' : 'API_FORBIDDEN', message)));
}

export async function startApi(options: StartApiOptions): Promise<ApiServer> {
  const { config, host, logger } = options;
  // Throws CONFIG_INVALID before anything is opened when a public address has no token.
  const auth = createHttpAuth({
    component: 'api',
    realm: 'rollout-fleet api',
    token: config.api.token,
    host,
    credentialsHint: 'set RF_API_TOKEN',
    logger,
    deny: denyJson,
  });
  const keys = createKeyspace(config.queue.prefix);
  const apiId = `api-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const redis = createRedis(config.redis, { connectionName: `rf-api:${apiId}` });
  const queueConnection = createRedis(config.redis, { connectionName: `rf-api-queue:${apiId}` });
  const queue = new Queue<EpisodeJobData>(config.queue.name, {
    connection: queueConnection,
    prefix: config.queue.prefix,
  });
  queue.on('error', (err) => logger.warn({ err }, 'api: queue connection error'));
  const targets = options.targets ?? [{ id: 'default', target: options.target }];
  let supply: SandboxSupply;
  try {
    supply = await createSandboxSupply({
      redis,
      keys,
      targets,
      workerId: apiId,
      logger,
      limits: supplyLimitsFrom(config),
    });
  } catch (cause) {
    await queue.close();
    queueConnection.disconnect();
    redis.disconnect();
    throw new RolloutError('REDIS_UNAVAILABLE', `api: cannot reach Redis: ${(cause as Error).message}`, { cause });
  }
  const sessions = new SessionManager({
    supply,
    logger,
    defaults: {
      image: config.sandbox.image,
      idleTimeoutS: config.api.sessionIdleS,
      startupTimeoutS: config.sandbox.startupTimeoutS,
      stepTimeoutS: config.sandbox.stepTimeoutS,
    },
  });
  const loops: Array<() => void> = [];
  if (options.reaper !== false) {
    loops.push(
      createProcessReaper({
        config,
        redis,
        keys,
        leases: supply.leases,
        fleetId: supply.fleetId,
        targets,
        logger,
      }).start(),
    );
  }

  const app = createHttpApp({ 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' });
  app.set('query parser', 'simple');
  app.use(httpGate(auth, logger, { component: 'api', allowWithoutOrigin: true, deny: denyJson }));
  app.use(runRoutes({ config, redis, keys, queue }));
  app.use(streamRoutes({ redis, keys, ...options.streams }));
  app.use(sessionRoutes({ sessions, maxBodyBytes: config.api.maxBodyBytes }));
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(apiError('API_NOT_FOUND', `no route ${req.method} ${req.path}`));
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    sendError(res, bodyParserError(err) ?? err, logger.child({ method: req.method, path: req.path }));
  });

  const listener = await listenHttp(app, {
    component: 'api',
    host,
    port: options.port,
    onFailure: async () => {
      for (const stop of loops) stop();
      await queue.close();
      queueConnection.disconnect();
      redis.disconnect();
    },
  });
  // Calls may run as long as their timeout: never cut a request off by Node's default request timeout.
  listener.server.requestTimeout = 0;
  const { port, url } = listener;
  logger.info({ url, auth: auth.mode, fleetId: supply.fleetId }, 'api listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    sessions,
    supply,
    close: () => {
      closing ??= (async () => {
        for (const stop of loops) stop();
        await sessions.closeAll();
        await supply.close();
        await listener.close();
        await queue.close();
        queueConnection.disconnect();
        redis.disconnect();
        logger.info('api stopped');
      })();
      return closing;
    },
  };
}

/** body-parser's own errors (too large, bad encoding) as API errors. */
function bodyParserError(err: unknown): RolloutError | undefined {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') {
    const limit = (err as { limit?: number }).limit;
    return apiError(
      'INPUT_TOO_LARGE',
      `the request body is over the limit of ${limit ?? '?'} bytes (RF_API_MAX_BODY_MB)`,
      {
        problems: [
          {
            file: '(request)',
            message: 'body too large',
            hint: 'split the run into several submissions (the same run_id adds to it) or raise RF_API_MAX_BODY_MB',
            code: 'INPUT_TOO_LARGE',
          },
        ],
      },
    );
  }
  if (
    typeof type === 'string' &&
    (type.startsWith('encoding.') ||
      type.startsWith('charset.') ||
      type === 'request.aborted' ||
      type === 'request.size.invalid')
  ) {
    return apiError('INPUT_INVALID', `the request body could not be read (${type})`);
  }
  return undefined;
}
