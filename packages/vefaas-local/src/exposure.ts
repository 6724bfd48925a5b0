/**
 * Who may reach this host. On loopback only this machine's users can; anywhere else (0.0.0.0, a LAN address,
 * a host name) anyone on the network can, and this host runs whatever commands it is sent. So beyond loopback:
 * - the control plane must verify signatures and the gateway route must require a key (else: remote code
 *   execution for anyone who finds the port);
 * - isolation 'none' is refused altogether (commands would run as this user on this machine);
 * - /_admin (fault injection, instance kills) answers only with the admin key, and is closed without one.
 * On loopback /_admin stays open unless an admin key is set, then it is required there too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackHost } from '@rollout-fleet/shared';
import { keyMatches, presentedKey } from './gateway/gateway-key.js';
import type { Isolation } from './host-options.js';
import { sendJson } from './http-util.js';

export interface Exposure {
  host: string;
  isolation: Isolation;
  /** Signatures are checked (the default verifier, or an injected one). */
  verifiesSignatures: boolean;
  gatewayKey: string | null;
}

/** Why this host must not start as configured, or undefined when it may. */
export function exposureProblem(exposure: Exposure): string | undefined {
  if (isLoopbackHost(exposure.host)) return undefined;
  const where = `listening on ${exposure.host} (beyond loopback: reachable from the network)`;
  if (exposure.isolation === 'none') {
    return (
      `refusing ${where} with isolation 'none': anyone who reaches the port could run commands on this machine. ` +
      'Bind 127.0.0.1 (--host 127.0.0.1), or use --isolation bwrap together with signature verification and a gateway key.'
    );
  }
  const missing = [
    ...(exposure.verifiesSignatures ? [] : ['signature verification (drop --no-verify-signatures)']),
    ...(exposure.gatewayKey === null || exposure.gatewayKey === '' ? ['a gateway key (--gateway-key)'] : []),
  ];
  if (missing.length === 0) return undefined;
  return (
    `refusing ${where} without ${missing.join(' and ')}: anyone who reaches the port could create sandboxes and run commands in them. ` +
    'Add them, or bind 127.0.0.1 (--host 127.0.0.1).'
  );
}

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/** /_admin behind the rules above. */
export function guardAdmin(handler: Handler, options: { host: string; adminKey: string | null }): Handler {
  const loopback = isLoopbackHost(options.host);
  return async (req, res, url) => {
    if (options.adminKey === null) {
      if (loopback) return handler(req, res, url);
      return sendJson(res, 403, {
        error: {
          code: 'AdminDisabled',
          message:
            'admin routes are closed on a host reachable from the network; start it with an admin key (--admin-key) to use them',
        },
      });
    }
    if (!keyMatches(options.adminKey, presentedKey(req.headers.authorization, url))) {
      return sendJson(res, 401, {
        error: { code: 'AdminKeyRequired', message: 'send the admin key as "Authorization: Bearer <key>"' },
      });
    }
    return handler(req, res, url);
  };
}
