/**
 * Result and group streams (v1). Wire contract (see contracts/stream-contracts.ts):
 * - GET /v1/runs/:runId/results?after=<cursor>&follow=true|false
 * - GET /v1/runs/:runId/groups?after=<cursor>&follow=true|false
 * NDJSON by default, Server-Sent Events with `Accept: text/event-stream` (or `format=sse`); `Last-Event-ID`
 * resumes like `after`. Items come in completion order, each once; the last line says why the stream ended.
 * A client that loses its connection asks again after the last cursor it saw and misses nothing.
 */
import { Router, type Request, type Response } from 'express';
import { runFinished, streamGroups, streamResults } from '@rollout-fleet/producer';
import type { Keyspace, RedisClient } from '@rollout-fleet/shared';
import { StreamQuerySchema } from '../contracts/stream-contracts.js';
import { openEventStream, streamFormatOf } from '../http/event-stream.js';
import { checkInput } from '../http/json-body.js';
import { knownRunId } from './run-routes.js';

export interface StreamRoutesDeps {
  redis: RedisClient;
  keys: Keyspace;
  /** Keep-alive while a followed stream is idle. @defaultValue 15 s */
  keepAliveMs?: number;
  /** How long one blocking read waits before checking whether the run is done. @defaultValue 2 s */
  blockMs?: number;
}

export function streamRoutes(deps: StreamRoutesDeps): Router {
  const router = Router();
  router.get('/v1/runs/:runId/results', (req, res) => serve('result', req, res, deps));
  router.get('/v1/runs/:runId/groups', (req, res) => serve('group', req, res, deps));
  return router;
}

async function serve(kind: 'result' | 'group', req: Request, res: Response, deps: StreamRoutesDeps): Promise<void> {
  const runId = await knownRunId(req, deps);
  const { format: _format, ...rest } = req.query;
  const lastEventId = req.headers['last-event-id'];
  const query = checkInput(StreamQuerySchema, {
    ...rest,
    ...(rest.after === undefined && typeof lastEventId === 'string' && lastEventId !== ''
      ? { after: lastEventId }
      : {}),
  });
  const writer = openEventStream(req, res, { format: streamFormatOf(req), keepAliveMs: deps.keepAliveMs ?? 15_000 });
  let cursor: string | null = query.after === undefined || query.after === '0' ? null : query.after;
  const options = {
    redis: deps.redis,
    keys: deps.keys,
    runId,
    follow: query.follow,
    signal: writer.signal,
    ...(query.after === undefined ? {} : { after: query.after }),
    ...(deps.blockMs === undefined ? {} : { blockMs: deps.blockMs }),
    onCursor: (next: string) => {
      cursor = next;
    },
  };
  if (kind === 'result') {
    for await (const item of streamResults(options)) {
      await writer.item(item.streamId, 'result', item.result);
      cursor = item.streamId;
      if (writer.signal.aborted) break;
    }
  } else {
    for await (const item of streamGroups(options)) {
      await writer.item(item.streamId, 'group', item.group);
      cursor = item.streamId;
      if (writer.signal.aborted) break;
    }
  }
  if (writer.signal.aborted) return;
  const cancelled = (await deps.redis.hget(deps.keys.run(runId), 'cancelled')) === '1';
  const reason = !query.follow
    ? 'caught-up'
    : cancelled
      ? 'cancelled'
      : (await runFinished(deps.redis, deps.keys, runId))
        ? 'finished'
        : 'caught-up';
  writer.end({ reason, cursor });
}
