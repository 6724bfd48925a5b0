/**
 * A worker's own health endpoint (`rollout-fleet worker --health-port N`), for Kubernetes probes:
 *   GET /healthz  200 {"ok":true}       liveness: the process and its event loop answer
 *   GET /readyz   200 | 503 WorkerHealth readiness: running, not stopping, Redis answers (see worker-health.ts)
 * Everything else is 404; only GET and HEAD. Nothing secret is served (no URLs, no keys), so it needs no auth,
 * but it binds 127.0.0.1 unless told otherwise (a pod binds 0.0.0.0 for the kubelet).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Logger } from '@rollout-fleet/shared';
import type { WorkerHealth } from './worker-health.js';

export interface HealthServerOptions {
  port: number;
  /** @defaultValue '127.0.0.1' */
  host?: string;
  readiness: () => Promise<WorkerHealth>;
  logger: Logger;
}

export interface HealthServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const host = options.host ?? '127.0.0.1';
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'method not allowed' });
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') return send(res, 200, { ok: true });
    if (path === '/readyz') {
      const health = await options.readiness();
      return send(res, health.ready ? 200 : 503, health);
    }
    return send(res, 404, { error: 'not found', routes: ['/healthz', '/readyz'] });
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      options.logger.warn({ err }, 'health endpoint failed');
      if (!res.headersSent) send(res, 500, { error: 'health check failed' });
    });
  });
  server.listen(options.port, host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))]);
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/`;
  return {
    url,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
