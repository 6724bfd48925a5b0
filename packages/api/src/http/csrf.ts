/**
 * CSRF guard for writes (Bull Board's retry / clean / pause / ... are POST, PUT, PATCH, DELETE).
 * Browsers attach basic-auth credentials to any request to the origin, even one a foreign page triggers, so
 * a write must prove it comes from the dashboard's own pages: its `Origin` (or, if a browser sent none, its
 * `Referer`) must have the same host:port as the request's Host. Browsers always send `Origin` on
 * non-GET fetch/XHR and pages cannot forge it. A request authenticated by a bearer header is exempt: a
 * foreign page cannot make the browser add that header. Tools writing with basic auth (curl) must send
 * `Origin: http://<dashboard host:port>` explicitly.
 * The API (no cookies, no basic auth; bearer or open on loopback) takes writes that carry neither header:
 * those come from programs, since browsers send `Origin` with every cross-origin POST.
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

export interface CsrfOptions {
  /** Let writes with neither Origin nor Referer through (non-browser clients). @defaultValue false */
  allowWithoutOrigin?: boolean;
  /** Names the server in logs and refusals. @defaultValue 'dashboard' */
  component?: string;
  deny?: (res: Response, status: 403, message: string) => void;
}

export function csrfGuard(logger: Logger, options: CsrfOptions = {}) {
  const component = options.component ?? 'dashboard';
  return (req: Request, res: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(req.method) || (res.locals.authVia as AuthenticatedVia | undefined) === 'bearer') {
      next();
      return;
    }
    const sent = req.headers.origin !== undefined || req.headers.referer !== undefined;
    if (!sent && options.allowWithoutOrigin === true) {
      next();
      return;
    }
    const source = hostOf(req.headers.origin) ?? hostOf(req.headers.referer);
    const target = req.headers.host?.toLowerCase();
    if (source !== undefined && target !== undefined && source === target) {
      next();
      return;
    }
    logger.warn(
      { method: req.method, path: req.path, origin: req.headers.origin ?? null },
      `${component}: cross-site write refused`,
    );
    const message = `Forbidden: cross-site write (Origin does not match this ${component})`;
    if (options.deny) options.deny(res, 403, message);
    else res.status(403).type('text/plain').send(`${message}\n`);
  };
}
