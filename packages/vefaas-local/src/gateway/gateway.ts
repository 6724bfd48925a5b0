/**
 * Wire contract: the data-plane route (vefaas-api.md §3). `<prefix>/<path>` is forwarded as `/<path>` to the
 * sandbox named by header `X-Faas-Instance-Name` (wins) or query `faasInstanceName`.
 *   - gateway key configured and missing/wrong → 401 {"error":{"code":"Unauthorized",...}} (sandbox not reached)
 *   - no pin → 400 {"error":{"code":"MissingInstanceName",...}}
 *   - unknown, Failed, Terminating or dead instance → configurable, default 404
 *     {"error":{"code":"InstanceNotFound","message":"instance <id> not found"}}
 *   - instance still Starting → 503 {"error":{"code":"InstanceNotReady",...}} (the dead-instance answer with the
 *     fault coldStart.unknownToGateway)
 *   - injected fault → 5xx {"error":{"code":"GatewayError",...}}; upstream timeout → 504; other upstream failure → 502
 * Forwarding keeps `X-Faas-Instance-Name` and every end-to-end header; it drops the `faasInstanceName` query
 * parameter and the gateway key (header or query) so the sandbox never sees it. Bodies stream both ways.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@rollout-fleet/shared';
import type { RunningInstance } from '../backends/backend.js';
import type { FaultController } from '../faults/fault-controller.js';
import { headerValue, readBody, sendJson } from '../http-util.js';
import type { SandboxManager } from '../registry/sandbox-manager.js';
import type { SandboxRecord } from '../registry/sandbox-record.js';
import { keyMatches, presentedKey } from './gateway-key.js';

const SECOND = 1000;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
]);
/** Tells the sandbox's server to freeze its shell before fetching the exit code (fault `shellStall`). */
const SHELL_STALL_HEADER = 'x-vefaas-local-shell-stall';
const INLINE_BODY_LIMIT = 64 * 1024 * 1024;

export interface DeadInstanceResponse {
  /** @defaultValue 404 */
  status: number;
  /** @defaultValue {"error":{"code":"InstanceNotFound","message":"instance <id> not found"}} */
  body: (instanceName: string) => unknown;
}

export interface GatewaySettings {
  /** Route prefix without a trailing slash ('' = the route is the server root). */
  prefix: string;
  /** Gateway key; null = no key required. */
  key: string | null;
  /** Per proxied request (headers and body each). @defaultValue 650 * SECOND */
  requestTimeoutMs: number;
  deadInstance: DeadInstanceResponse;
}

export const defaultDeadInstance: DeadInstanceResponse = {
  status: 404,
  body: (id) => ({ error: { code: 'InstanceNotFound', message: `instance ${id} not found` } }),
};

export interface GatewayDeps {
  settings: GatewaySettings;
  manager: SandboxManager;
  faults: FaultController;
  logger: Logger;
}

export function createGateway(deps: GatewayDeps) {
  const { settings, manager, faults, logger } = deps;
  const gatewayError = (res: ServerResponse, status: number, code: string, message: string): void =>
    sendJson(res, status, { error: { code, message } });

  return async function handleGateway(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname.slice(settings.prefix.length) || '/';
    const authorization = headerValue(req, 'authorization');
    if (settings.key !== null && !keyMatches(settings.key, presentedKey(authorization, url))) {
      gatewayError(res, 401, 'Unauthorized', 'missing or invalid gateway key');
      return;
    }
    const pin = headerValue(req, 'x-faas-instance-name') || url.searchParams.get('faasInstanceName') || '';
    if (pin === '') {
      gatewayError(
        res,
        400,
        'MissingInstanceName',
        'X-Faas-Instance-Name header or faasInstanceName query parameter is required',
      );
      return;
    }
    const fault = faults.gateway(path);
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    if (fault.hang) {
      logger.info({ sandboxId: pin, path }, 'injected hang: not answering');
      return;
    }
    if (fault.error) {
      gatewayError(res, fault.error.status, fault.error.code, fault.error.message);
      return;
    }
    const record = manager.get(pin);
    const dead = (): void => sendJson(res, settings.deadInstance.status, settings.deadInstance.body(pin));
    if (record === undefined || record.status === 'Failed' || record.status === 'Terminating') return dead();
    if (record.status === 'Starting' || record.instance === null) {
      if (record.status === 'Starting' && !faults.startingUnknownToGateway())
        return gatewayError(res, 503, 'InstanceNotReady', `instance ${pin} is starting`);
      return dead();
    }
    const instance = record.instance;
    if (record.slowMs !== undefined && record.slowMs > 0) await sleep(record.slowMs);
    const forwardPath = buildForwardPath(path, url, settings.key !== null);
    const headers = forwardHeaders(req, settings.key !== null && authorization !== undefined);
    if (fault.shellStall) headers[SHELL_STALL_HEADER] = JSON.stringify(fault.shellStall);
    if (fault.killInstance) {
      logger.info({ sandboxId: pin, path }, 'injected instance death');
      // An in-process instance answers synchronously, so it must die first; a real one dies mid-request.
      if (instance.target.kind === 'inline') await manager.killInstance(record);
      else setImmediate(() => void manager.killInstance(record));
    }
    try {
      if (instance.target.kind === 'inline') {
        const body = await readBody(req, INLINE_BODY_LIMIT);
        const response = await instance.target.handle({
          method: req.method ?? 'GET',
          path: forwardPath,
          headers,
          body,
        });
        res.writeHead(response.status, { ...response.headers, 'content-length': response.body.length });
        res.end(response.body);
        return;
      }
      await proxyToSocket({ req, res, instance, path: forwardPath, headers, timeoutMs: settings.requestTimeoutMs });
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (await instanceGone(record, instance)) return dead();
      const timedOut = (err as { code?: string }).code?.startsWith('UND_ERR_') && /Timeout/.test((err as Error).name);
      logger.warn({ sandboxId: pin, path, err }, 'gateway upstream failure');
      gatewayError(
        res,
        timedOut ? 504 : 502,
        timedOut ? 'UpstreamTimeout' : 'UpstreamError',
        `instance ${pin}: ${(err as Error).message}`,
      );
    }
  };
}

interface ProxyRequest {
  req: IncomingMessage;
  res: ServerResponse;
  instance: RunningInstance;
  path: string;
  headers: Record<string, string | string[]>;
  timeoutMs: number;
}

async function proxyToSocket({ req, res, instance, path, headers, timeoutMs }: ProxyRequest): Promise<void> {
  if (instance.target.kind !== 'socket') throw new Error('not a socket instance');
  const abort = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) abort.abort();
  };
  res.on('close', onClose);
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  try {
    const upstream = await instance.target.client.request({
      method: method as 'GET',
      path,
      headers,
      body: hasBody ? req : null,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: abort.signal,
    });
    const responseHeaders: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) responseHeaders[name] = value;
    }
    res.writeHead(upstream.statusCode, responseHeaders);
    await pipeline(upstream.body, res);
  } finally {
    res.off('close', onClose);
  }
}

function buildForwardPath(path: string, url: URL, stripKey: boolean): string {
  const query = new URLSearchParams(url.search);
  query.delete('faasInstanceName');
  if (stripKey) query.delete('Authorization');
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

function forwardHeaders(req: IncomingMessage, stripAuthorization: boolean): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (stripAuthorization && name === 'authorization') continue;
    // Only the fault controller may ask a sandbox to stall (runtime/rex_stall.py).
    if (name === SHELL_STALL_HEADER) continue;
    headers[name] = value;
  }
  return headers;
}

/** After an upstream failure: did the instance die (so the client gets the dead-instance answer)? */
async function instanceGone(record: SandboxRecord, instance: RunningInstance): Promise<boolean> {
  const exited = await Promise.race([instance.exited.then(() => true), sleep(SECOND / 2).then(() => false)]);
  return exited || record.instance !== instance || record.status !== 'Ready';
}
