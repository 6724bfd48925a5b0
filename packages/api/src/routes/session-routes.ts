/**
 * Remote sessions (v1). Wire contract (HTTP, JSON; see contracts/session-contracts.ts):
 * - POST   /v1/sessions                 SessionCreate → 201 Session (started, tools installed; waits for the
 *                                        fleet's caps and create rate up to `wait_s`, then 503 SANDBOX_ACQUIRE_TIMEOUT)
 * - GET    /v1/sessions                 → 200 {sessions: Session[]} (this API server's)
 * - GET    /v1/sessions/:id             → 200 Session
 * - POST   /v1/sessions/:id/run         {command | tool_call, timeout_s} → 200 {output, exit_code, duration_ms, timed_out, ...}
 * - POST   /v1/sessions/:id/tools       {tools} → 200 Session (tools installed on the PATH)
 * - PUT    /v1/sessions/:id/files       {path, content} → 204
 * - GET    /v1/sessions/:id/files?path= → 200 {path, content}
 * - DELETE /v1/sessions/:id             → 204 (sandbox killed)
 * Errors: 404 SESSION_NOT_FOUND; 410 SESSION_CLOSED (ended: deleted, idle, lifetime, sandbox lost); 410
 * SANDBOX_DEAD (the call found the sandbox gone; the session is ended); 502 for other sandbox failures.
 */
import express, { Router } from 'express';
import {
  FileReadQuerySchema,
  FileWriteSchema,
  InstallToolsSchema,
  SessionCreateSchema,
  SessionRunSchema,
} from '../contracts/session-contracts.js';
import { checkInput, parseJsonBody } from '../http/json-body.js';
import type { SessionManager } from '../sessions/session-manager.js';

/** Session bodies are small; file contents are bounded by RF_API_MAX_BODY_MB like runs. */
export function sessionRoutes(deps: { sessions: SessionManager; maxBodyBytes: number }): Router {
  const { sessions } = deps;
  const router = Router();
  const body = express.text({ type: () => true, limit: deps.maxBodyBytes });
  const idOf = (params: unknown): string => String((params as { id?: string }).id ?? '');

  router.post('/v1/sessions', body, async (req, res) => {
    const request = parseJsonBody(SessionCreateSchema, typeof req.body === 'string' ? req.body : '');
    // The client going away before the sandbox is ready cancels the acquisition.
    const gone = new AbortController();
    const onClose = (): void => {
      if (!res.writableEnded) gone.abort();
    };
    res.once('close', onClose);
    try {
      res.status(201).json(await sessions.create(request, gone.signal));
    } finally {
      res.off('close', onClose);
    }
  });

  router.get('/v1/sessions', (_req, res) => {
    res.json({ sessions: sessions.list() });
  });

  router.get('/v1/sessions/:id', (req, res) => {
    res.json(sessions.describe(idOf(req.params)));
  });

  router.post('/v1/sessions/:id/run', body, async (req, res) => {
    const call = parseJsonBody(SessionRunSchema, typeof req.body === 'string' ? req.body : '');
    res.json(await sessions.run(idOf(req.params), call));
  });

  router.post('/v1/sessions/:id/tools', body, async (req, res) => {
    const { tools } = parseJsonBody(InstallToolsSchema, typeof req.body === 'string' ? req.body : '');
    res.json(await sessions.installTools(idOf(req.params), tools));
  });

  router.put('/v1/sessions/:id/files', body, async (req, res) => {
    const file = parseJsonBody(FileWriteSchema, typeof req.body === 'string' ? req.body : '');
    await sessions.writeFile(idOf(req.params), file.path, file.content);
    res.status(204).end();
  });

  router.get('/v1/sessions/:id/files', async (req, res) => {
    const { path } = checkInput(FileReadQuerySchema, { ...req.query });
    res.json({ path, content: await sessions.readFile(idOf(req.params), path) });
  });

  router.delete('/v1/sessions/:id', async (req, res) => {
    await sessions.close(idOf(req.params));
    res.status(204).end();
  });

  return router;
}
