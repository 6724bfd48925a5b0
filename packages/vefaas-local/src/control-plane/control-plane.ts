/**
 * Wire contract: `POST /?Action=<Name>&Version=2024-06-06`, JSON body with PascalCase keys, V4-signed
 * (service `vefaas`), answered with the top-gateway envelope (envelope.ts).
 * Order of checks: signature (401/403/400 codes of §1.2) → Action/Version (MissingParameter 400,
 * InvalidActionOrVersion 404) → injected faults (latency, hang, 5xx InternalError) → JSON body
 * (InvalidParameter 400) → the action's own validation and result (→ an injected lost answer: the action
 * ran, nothing is sent back).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@rollout-fleet/shared';
import { BodyTooLargeError, readBody } from '../http-util.js';
import type { ActionContext, ActionHandler } from './action-context.js';
import { createSandbox } from './create-sandbox.js';
import {
  API_VERSION,
  ApiError,
  errorBody,
  newRequestId,
  type ResponseMetadata,
  SERVICE,
  successBody,
} from './envelope.js';
import type { Body } from './params.js';
import { describeSandbox, killSandbox, listSandboxes, setSandboxTimeout } from './sandbox-actions.js';
import type { SignatureVerifier } from './signature.js';

const MAX_BODY_BYTES = 1024 * 1024;

const ACTIONS: Record<string, ActionHandler> = {
  CreateSandbox: createSandbox,
  DescribeSandbox: describeSandbox,
  ListSandboxes: listSandboxes,
  KillSandbox: killSandbox,
  SetSandboxTimeout: setSandboxTimeout,
};

export const CONTROL_PLANE_ACTIONS = Object.keys(ACTIONS);

export interface ControlPlaneOptions {
  context: ActionContext;
  /** null = signatures are not checked (only when configured explicitly). */
  verifier: SignatureVerifier | null;
  /** Region reported when signatures are not checked. */
  region: string;
  logger: Logger;
}

export function createControlPlane(options: ControlPlaneOptions) {
  const { context, verifier, logger } = options;

  return async function handleControlPlane(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const started = performance.now();
    const action = url.searchParams.get('Action') ?? '';
    const version = url.searchParams.get('Version') ?? '';
    const meta: ResponseMetadata = {
      RequestId: newRequestId(),
      Action: action,
      Version: version,
      Service: SERVICE,
      Region: options.region,
    };
    const reply = (status: number, text: string, code?: string): void => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      logger.debug(
        { action, status, code, requestId: meta.RequestId, ms: Math.round(performance.now() - started) },
        'control-plane request',
      );
    };
    try {
      const raw = await readBody(req, MAX_BODY_BYTES);
      if (verifier !== null) {
        const check = verifier({
          method: req.method ?? 'POST',
          path: url.pathname,
          rawQuery: url.search.startsWith('?') ? url.search.slice(1) : url.search,
          headers: req.headers,
          body: raw,
          service: SERVICE,
        });
        if (!check.ok) throw new ApiError(check.code, check.message);
        meta.Region = check.region;
      }
      if (action === '') throw new ApiError('MissingParameter', 'The required parameter Action is missing');
      if (version === '') throw new ApiError('MissingParameter', 'The required parameter Version is missing');
      const handler = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
      if (handler === undefined || version !== API_VERSION || req.method !== 'POST') {
        throw new ApiError('InvalidActionOrVersion', `Could not find operation ${action} for version ${version}`);
      }
      const fault = context.faults.controlPlane(action);
      if (fault.latencyMs > 0) await sleep(fault.latencyMs);
      if (fault.hang) {
        logger.info({ action, requestId: meta.RequestId }, 'injected hang: not answering');
        return;
      }
      if (fault.error) throw new ApiError(fault.error.code, fault.error.message, fault.error.status);
      const result = await handler(parseBody(raw), context);
      if (fault.lostAnswer) {
        logger.info({ action, requestId: meta.RequestId }, 'injected lost answer: the action ran, no answer is sent');
        return;
      }
      reply(200, successBody(meta, result));
    } catch (err) {
      const apiError = toApiError(err, logger);
      reply(apiError.status, errorBody(meta, apiError), apiError.code);
    }
  };
}

function parseBody(raw: Buffer): Body {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError('InvalidParameter', 'The request body is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('InvalidParameter', 'The request body must be a JSON object');
  }
  return value as Body;
}

function toApiError(err: unknown, logger: Logger): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof BodyTooLargeError) return new ApiError('InvalidParameter', err.message);
  logger.error({ err }, 'control-plane action failed');
  return new ApiError('InternalError', 'internal error');
}
