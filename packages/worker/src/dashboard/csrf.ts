/**
 * CSRF guard for writes (Bull Board's retry / clean / pause / ... are POST, PUT, PATCH, DELETE).
 * Browsers attach basic-auth credentials to any request to the origin, even one a foreign page triggers, so
 * a write must prove it comes from the dashboard's own pages: its `Origin` (or, if a browser sent none, its
 * `Referer`) must have the same host:port as the request's Host. Browsers always send `Origin` on
 * non-GET fetch/XHR and pages cannot forge it. A request authenticated by a bearer header is exempt: a
 * foreign page cannot make the browser add that header. Tools writing with basic auth (curl) must send
 * `Origin: http://<dashboard host:port>` explicitly.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@rollout-fleet/shared';
import type { AuthenticatedVia } from './auth.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined || url === '' || url === 'null') return undefined;
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return undefined;
  }
}

export function csrfGuard(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(req.method) || (res.locals.authVia as AuthenticatedVia | undefined) === 'bearer') {
      next();
      return;
    }
    const source = hostOf(req.headers.origin) ?? hostOf(req.headers.referer);
    const target = req.headers.host?.toLowerCase();
    if (source !== undefined && target !== undefined && source === target) {
      next();
      return;
    }
    logger.warn({ method: req.method, path: req.path, origin: req.headers.origin ?? null }, 'dashboard: cross-site write refused');
    res.status(403).type('text/plain').send('Forbidden: cross-site write (Origin does not match this dashboard)\n');
  };
}
