/**
 * Wire contract: local-only admin endpoints (no veFaaS equivalent; unauthenticated — bind the host to loopback).
 *   GET  /_admin/faults                          → 200 {config, stats, calls} (calls: requests by `cp:<Action>`, `gw:<path>`)
 *   POST /_admin/faults  <FaultConfig JSON>      → 200 {config} | 400 {"error":{"code":"InvalidFaultConfig",...}}
 *   DELETE /_admin/faults                        → 200 {config} (all faults off, seed kept)
 *   GET  /_admin/sandboxes                       → 200 {sandboxes:[{id, status, pid, errorCode, createdAt, expireAt}]}
 *   POST /_admin/sandboxes/<id>/kill-instance    → 200 {killed:true} | 404 (kills the processes, keeps the record:
 *                                                   Describe then shows Failed function_health_check_failed)
 *   POST /_admin/sandboxes/<id>/slow {latencyMs} → 200 {slowMs} | 404 | 400: every gateway request to this instance
 *                                                   waits latencyMs first (a slow host: straggler tests)
 * The sandbox listing also carries `metadata` (labels) and `slowMs`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from '../http-util.js';
import type { SandboxManager } from '../registry/sandbox-manager.js';
import type { FaultController } from './fault-controller.js';

export const ADMIN_PREFIX = '/_admin/';

export function createAdmin(deps: { faults: FaultController; manager: SandboxManager }) {
  const { faults, manager } = deps;
  return async function handleAdmin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (path === '/_admin/faults') {
      if (method === 'GET')
        return sendJson(res, 200, { config: faults.config, stats: faults.stats, calls: faults.calls });
      if (method === 'DELETE') {
        faults.reset();
        return sendJson(res, 200, { config: faults.config });
      }
      if (method === 'POST') {
        try {
          const input: unknown = JSON.parse((await readBody(req, 1024 * 1024)).toString('utf8'));
          return sendJson(res, 200, { config: faults.configure(input) });
        } catch (err) {
          return sendJson(res, 400, { error: { code: 'InvalidFaultConfig', message: (err as Error).message } });
        }
      }
    }
    if (path === '/_admin/sandboxes' && method === 'GET') {
      const sandboxes = manager.list().map((record) => ({
        id: record.id,
        status: record.status,
        pid: record.instance?.pid ?? null,
        errorCode: record.errorCode,
        createdAt: new Date(record.createdAt).toISOString(),
        expireAt: new Date(record.expireAt).toISOString(),
        metadata: record.spec.metadata,
        slowMs: record.slowMs ?? 0,
      }));
      return sendJson(res, 200, { sandboxes });
    }
    const kill = /^\/_admin\/sandboxes\/([^/]+)\/kill-instance$/.exec(path);
    if (kill && method === 'POST') {
      const record = manager.get(decodeURIComponent(kill[1] ?? ''));
      if (record === undefined) return sendJson(res, 404, { error: { code: 'NotFound', message: 'no such sandbox' } });
      await manager.killInstance(record);
      return sendJson(res, 200, { killed: true });
    }
    const slow = /^\/_admin\/sandboxes\/([^/]+)\/slow$/.exec(path);
    if (slow && method === 'POST') {
      const record = manager.get(decodeURIComponent(slow[1] ?? ''));
      if (record === undefined) return sendJson(res, 404, { error: { code: 'NotFound', message: 'no such sandbox' } });
      let latencyMs: unknown;
      try {
        latencyMs = (JSON.parse((await readBody(req, 4096)).toString('utf8')) as { latencyMs?: unknown }).latencyMs;
      } catch {
        latencyMs = undefined;
      }
      if (typeof latencyMs !== 'number' || !Number.isInteger(latencyMs) || latencyMs < 0) {
        return sendJson(res, 400, {
          error: { code: 'InvalidSlowness', message: 'body must be {"latencyMs": <whole number ≥ 0>}' },
        });
      }
      record.slowMs = latencyMs;
      return sendJson(res, 200, { slowMs: latencyMs });
    }
    return sendJson(res, 404, { error: { code: 'NotFound', message: `no admin endpoint ${method} ${path}` } });
  };
}
