/**
 * Run endpoints (v1). Wire contract (HTTP, JSON; see contracts/run-contracts.ts and docs/openapi.json):
 * - POST /v1/runs                 JSON {run_id, episodes | files, options...}, or a JSONL body
 *                                 (Content-Type application/x-ndjson) with the options in the query string
 *                                 → 200 SubmitResponse; 422 INPUT_* with every located problem (nothing enqueued);
 *                                 413 INPUT_TOO_LARGE over RF_API_MAX_BODY_MB. Idempotent: the same run again
 *                                 enqueues only what is missing. `announce: true` (query `announce=true`)
 *                                 validates and announces the run's sandboxes for warm pools instead
 *                                 (→ `announced: {specs, sandboxes, live_workers, warm_pool_workers, warm_pool_max,
 *                                 warning?}`; `warning` when no live worker keeps a warm pool), enqueueing nothing.
 * - GET  /v1/runs/:runId          → 200 RunStatus; 404 RUN_NOT_FOUND (with did_you_mean)
 * - POST /v1/runs/:runId/cancel   → 200 {removed, active}
 * - POST /v1/runs/:runId/retry    → 200 {retried, missing_payload}   (re-runs the failed episodes)
 * Run ids containing '/' are sent percent-encoded (`a%2Fb`).
 */
import type { Queue } from 'bullmq';
import express, { Router, type Request } from 'express';
import { cancelRun, requireRun, retryFailed } from '@rollout-fleet/producer';
import {
  IdSchema,
  getRunStatus,
  type Config,
  type EpisodeJobData,
  type Keyspace,
  type RedisClient,
  type RunStatus,
} from '@rollout-fleet/shared';
import { SubmitQuerySchema, SubmitRequestSchema, type RunStatusBody } from '../contracts/run-contracts.js';
import { apiError } from '../http/api-error.js';
import { REQUEST_FILE, checkInput, parseJsonBody } from '../http/json-body.js';
import { BODY_FILE, inputFilesOf, policyFileOf, submitFiles } from '../runs/submit-request.js';

export interface RunRoutesDeps {
  config: Config;
  redis: RedisClient;
  keys: Keyspace;
  queue: Queue<EpisodeJobData>;
}

const JSONL_TYPES = ['application/x-ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/jsonlines'];

export function toStatusBody(s: RunStatus): RunStatusBody {
  return {
    run_id: s.runId,
    created_at: s.createdAt,
    cancelled: s.cancelled,
    total: s.total,
    done: s.done,
    completed: s.completed,
    failed: s.failed,
    resolved: s.resolved,
    duplicates: s.duplicates,
    active: s.active,
    retrying: s.retrying,
    waiting: s.waiting,
    resolved_rate: s.resolvedRate,
    throughput_per_s: s.throughputPerS,
    eta_s: s.etaS,
    groups: { total: s.groups, completed: s.groupsCompleted },
  };
}

/** The run id of a route, checked; an unknown run is RUN_NOT_FOUND with the closest known ids (the producer's one lookup). */
export async function knownRunId(req: Request, deps: Pick<RunRoutesDeps, 'redis' | 'keys'>): Promise<string> {
  const runId = String((req.params as { runId?: string }).runId ?? '');
  if (!IdSchema.safeParse(runId).success) {
    throw apiError('INPUT_INVALID', `invalid run id "${runId}"`, {
      problems: [
        {
          file: REQUEST_FILE,
          field: 'run_id',
          message: `invalid run id "${runId}"`,
          hint: 'ids may use letters, digits and . _ @ + - / only',
          code: 'INPUT_INVALID',
        },
      ],
    });
  }
  await requireRun({ redis: deps.redis, keys: deps.keys, runId });
  return runId;
}

export function runRoutes(deps: RunRoutesDeps): Router {
  const router = Router();
  const body = express.text({ type: () => true, limit: deps.config.api.maxBodyBytes });

  router.post('/v1/runs', body, async (req, res) => {
    const text = typeof req.body === 'string' ? req.body : '';
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (JSONL_TYPES.includes(type)) {
      const options = checkInput(SubmitQuerySchema, { ...req.query });
      res.json(await submitFiles(deps, [{ path: BODY_FILE, text }], options));
      return;
    }
    const request = parseJsonBody(SubmitRequestSchema, text);
    if (request.episodes?.length && request.format !== undefined && request.format !== 'native') {
      throw apiError('INPUT_INVALID', '`episodes` are native records; `format` applies to `files`', {
        problems: [
          {
            file: REQUEST_FILE,
            field: 'format',
            message: `format "${request.format}" given with native episodes`,
            hint: `send ${request.format} inputs as \`files\`, or drop \`format\``,
            code: 'INPUT_INVALID',
          },
        ],
      });
    }
    const { episodes: _e, files: _f, predictions: _p, policy: _policy, ...options } = request;
    res.json(await submitFiles(deps, inputFilesOf(request), options, policyFileOf(request)));
  });

  router.get('/v1/runs/:runId', async (req, res) => {
    const runId = await knownRunId(req, deps);
    res.json(toStatusBody(await getRunStatus({ redis: deps.redis, keys: deps.keys, runId })));
  });

  router.post('/v1/runs/:runId/cancel', async (req, res) => {
    const runId = await knownRunId(req, deps);
    const summary = await cancelRun({ queue: deps.queue, redis: deps.redis, keys: deps.keys, runId });
    res.json({ run_id: runId, removed: summary.removed, active: summary.active });
  });

  router.post('/v1/runs/:runId/retry', async (req, res) => {
    const runId = await knownRunId(req, deps);
    const { config } = deps;
    const summary = await retryFailed({
      queue: deps.queue,
      redis: deps.redis,
      keys: deps.keys,
      runId,
      policy: {
        attempts: config.worker.attempts,
        backoffMs: config.worker.backoffMs,
        retentionS: config.worker.resultRetentionDays * 86_400,
      },
    });
    res.json({ run_id: runId, retried: summary.retried, missing_payload: summary.missingPayload });
  });

  return router;
}
