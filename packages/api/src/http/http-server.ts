/**
 * What the API and the dashboard share as HTTP servers: an express app that sets our response headers (and no
 * `X-Powered-By`), the one gate in front of their routes (authentication, then the CSRF guard for writes), and
 * listening and stopping.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import { RolloutError, type Logger } from '@rollout-fleet/shared';
import type { HttpAuth } from './auth.js';
import { csrfGuard, type CsrfOptions } from './csrf.js';
import { hostForUrl } from './loopback.js';

/** An express app that sends `headers` on every response. */
export function createHttpApp(headers: Readonly<Record<string, string>>): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    next();
  });
  return app;
}

/** Authentication, then the CSRF guard for writes: every route mounted after it is behind both. */
export function httpGate(auth: HttpAuth, logger: Logger, csrf?: CsrfOptions): RequestHandler[] {
  return [auth.middleware, csrfGuard(logger, csrf)];
}

export interface ListeningServer {
  readonly server: Server;
  readonly port: number;
  /** `http://host:port` (no trailing slash). */
  readonly url: string;
  /** Drops open connections (streams, keep-alive) and stops listening. */
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Names the server in the error, e.g. `api`, `dashboard`. */
  component: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Releases what the caller opened before listening, when listening fails. */
  onFailure: () => Promise<void>;
}

/** Listens on host:port; a taken port or an address that cannot be bound is CONFIG_INVALID. */
export async function listenHttp(app: Express, options: ListenOptions): Promise<ListeningServer> {
  const { component, host } = options;
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(options.port, host);
      s.once('listening', () => resolve(s));
      s.once('error', reject);
    });
  } catch (err) {
    await options.onFailure();
    throw new RolloutError(
      'CONFIG_INVALID',
      `${component}: cannot listen on ${host}:${options.port}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    url: `http://${hostForUrl(host)}:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
