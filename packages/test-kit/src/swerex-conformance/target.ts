/**
 * How the conformance suite reaches a SWE-ReX server: directly over its UNIX socket, or through any HTTP
 * front (the vefaas-local gateway) via an undici dispatcher plus extra headers such as X-Faas-Instance-Name.
 */
import { Client, request, type Dispatcher } from 'undici';

export interface SwerexRequest {
  method: string;
  /** Path as the SWE-ReX server defines it, e.g. `/run_in_session`. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface SwerexReply {
  status: number;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  text: string;
}

export interface SwerexConformanceTarget {
  /** The X-API-Key the server was started with (non-empty: the suite checks authentication). */
  readonly authToken: string;
  /** Sends one request as given; adds no API key of its own. */
  send(req: SwerexRequest): Promise<SwerexReply>;
}

export interface DispatcherTargetOptions {
  /** e.g. `http://localhost` for a socket client, `http://127.0.0.1:8080` for a gateway. */
  origin: string;
  dispatcher: Dispatcher;
  authToken: string;
  /** Added to every request (e.g. `{ 'x-faas-instance-name': sandboxId }`). */
  headers?: Record<string, string>;
  /** Prepended to every path (a gateway route prefix). */
  pathPrefix?: string;
}

export function dispatcherTarget(options: DispatcherTargetOptions): SwerexConformanceTarget {
  return {
    authToken: options.authToken,
    async send(req) {
      const response = await request(`${options.origin}${options.pathPrefix ?? ''}${req.path}`, {
        dispatcher: options.dispatcher,
        method: req.method as Dispatcher.HttpMethod,
        headers: { ...options.headers, ...req.headers },
        body: req.body,
      });
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(response.headers)) {
        if (value !== undefined) headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      return { status: response.statusCode, headers, text: await response.body.text() };
    },
  };
}

/** A target bound to a server's UNIX socket; `close()` releases the connection pool. */
export function socketTarget(
  socketPath: string,
  authToken: string,
): SwerexConformanceTarget & { close(): Promise<void> } {
  const client = new Client('http://localhost', { socketPath, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const target = dispatcherTarget({ origin: 'http://localhost', dispatcher: client, authToken });
  return { ...target, close: () => client.close() };
}
