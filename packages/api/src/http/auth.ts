/**
 * Authentication of our HTTP servers (the dashboard and the API). Dashboard wire contract (HTTP):
 * - `Authorization: Basic base64(user:password)` when RF_DASHBOARD_USER + RF_DASHBOARD_PASSWORD are set;
 * - `Authorization: Bearer <token>` when RF_DASHBOARD_TOKEN is set; a browser, which cannot send a bearer
 *   header, may give the token as the basic-auth password (any user name);
 * - anything else → 401 with `WWW-Authenticate: Basic` (so browsers prompt) and, with a token, `Bearer`.
 * With no credentials configured (allowed on a loopback address only) every request passes, but the Host
 * header must name a loopback address: a DNS-rebinding page cannot then reach the open board.
 * Credentials are compared in constant time and never logged. The API uses the same code with a bearer
 * token only (RF_API_TOKEN) and JSON refusals.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { RolloutError, type Config, type Logger } from '@rollout-fleet/shared';
import { isLoopbackHost, isLoopbackHostHeader } from './loopback.js';

/** How the request proved itself; `bearer` is not a browser-ambient credential, so CSRF does not apply to it. */
export type AuthenticatedVia = 'basic' | 'bearer' | 'open';

export interface HttpAuth {
  readonly mode: 'basic' | 'token' | 'basic+token' | 'open';
  /** Express middleware: 401 unless authenticated; sets `res.locals.authVia`. */
  readonly middleware: (req: Request, res: Response, next: NextFunction) => void;
}

const REALM = 'rollout-fleet dashboard';

/** Constant time whatever the lengths: both sides are hashed to equal-length digests first. */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

function parseBasic(value: string): { user: string; password: string } | undefined {
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Why a request was turned away; the default writes plain text (the dashboard's pages). */
export type DenyResponder = (res: Response, status: 401 | 403, message: string) => void;

export interface HttpAuthOptions {
  /** Names the server in challenges, logs and refusals, e.g. `dashboard`, `api`. */
  component: string;
  /** Realm in the WWW-Authenticate challenges. */
  realm: string;
  basic?: { user: string; password: string } | undefined;
  token?: string | undefined;
  /** Bind address: without credentials only a loopback address is allowed. */
  host: string;
  /** What to tell a person who binds a public address without credentials, e.g. `set RF_API_TOKEN`. */
  credentialsHint: string;
  /** Browsers cannot send a bearer header, so the dashboard also takes the token as a basic-auth password. @defaultValue false */
  tokenAsBasicPassword?: boolean;
  logger: Logger;
  deny?: DenyResponder;
}

const plainDeny: DenyResponder = (res, status, message) => {
  res.status(status).type('text/plain').send(`${message}\n`);
};

/**
 * Authentication for one of our HTTP servers: bearer token and/or basic credentials, or — with neither, on a
 * loopback address only — open, but answering only requests whose Host names a loopback address. Throws
 * CONFIG_INVALID for a non-loopback address with no credentials at all.
 */
export function createHttpAuth(options: HttpAuthOptions): HttpAuth {
  const { basic, token, component } = options;
  if (basic === undefined && token === undefined && !isLoopbackHost(options.host)) {
    throw new RolloutError(
      'CONFIG_INVALID',
      `${component}: refusing to listen on ${options.host} without credentials; ${options.credentialsHint}, or bind to 127.0.0.1`,
      { details: { host: options.host } },
    );
  }
  const deny = options.deny ?? plainDeny;
  const basicAccepted = basic !== undefined || (options.tokenAsBasicPassword === true && token !== undefined);
  const mode = basic && token !== undefined ? 'basic+token' : basic ? 'basic' : token !== undefined ? 'token' : 'open';
  const challenges = [
    ...(basicAccepted ? [`Basic realm="${options.realm}", charset="UTF-8"`] : []),
    ...(token === undefined ? [] : [`Bearer realm="${options.realm}"`]),
  ];

  const check = (header: string | undefined): AuthenticatedVia | undefined => {
    if (header === undefined) return undefined;
    const space = header.indexOf(' ');
    const scheme = header.slice(0, space < 0 ? header.length : space).toLowerCase();
    const value = space < 0 ? '' : header.slice(space + 1).trim();
    if (scheme === 'bearer' && token !== undefined) return safeEqual(value, token) ? 'bearer' : undefined;
    if (scheme !== 'basic' || !basicAccepted) return undefined;
    const given = parseBasic(value);
    if (given === undefined) return undefined;
    // Both comparisons always run, so timing does not tell which part was wrong.
    const userOk = basic !== undefined && safeEqual(given.user, basic.user);
    const passwordOk = basic !== undefined && safeEqual(given.password, basic.password);
    const tokenOk = options.tokenAsBasicPassword === true && token !== undefined && safeEqual(given.password, token);
    return (userOk && passwordOk) || tokenOk ? 'basic' : undefined;
  };

  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    if (mode === 'open') {
      if (!isLoopbackHostHeader(req.headers.host)) {
        options.logger.debug({ path: req.path }, `${component}: request with a non-loopback Host refused (open mode)`);
        deny(res, 403, `Forbidden: this unauthenticated ${component} answers only to a loopback Host`);
        return;
      }
      res.locals.authVia = 'open' satisfies AuthenticatedVia;
      next();
      return;
    }
    const via = check(req.headers.authorization);
    if (via === undefined) {
      // Never the header itself: only whether one was sent.
      options.logger.debug(
        { path: req.path, method: req.method, credentialsSent: req.headers.authorization !== undefined },
        `${component}: unauthenticated request`,
      );
      res.setHeader('WWW-Authenticate', challenges);
      deny(res, 401, 'Unauthorized');
      return;
    }
    res.locals.authVia = via;
    next();
  };
  return { mode, middleware };
}

/**
 * The dashboard's auth from its config section. Throws CONFIG_INVALID for a half-set user/password pair, and
 * for a non-loopback address with no credentials at all.
 */
export function createDashboardAuth(options: {
  dashboard: Config['dashboard'];
  host: string;
  logger: Logger;
}): HttpAuth {
  const { user, password, token } = options.dashboard;
  if ((user === undefined) !== (password === undefined)) {
    throw new RolloutError(
      'CONFIG_INVALID',
      'dashboard: set RF_DASHBOARD_USER and RF_DASHBOARD_PASSWORD together (or neither)',
    );
  }
  return createHttpAuth({
    component: 'dashboard',
    realm: REALM,
    basic: user !== undefined && password !== undefined ? { user, password } : undefined,
    token,
    host: options.host,
    credentialsHint: 'set RF_DASHBOARD_USER + RF_DASHBOARD_PASSWORD or RF_DASHBOARD_TOKEN',
    tokenAsBasicPassword: true,
    logger: options.logger,
  });
}
