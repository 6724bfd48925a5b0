/**
 * Run endpoints. Wire contract (HTTP, behind the dashboard's auth):
 * - GET /api/runs           → 200 {runs: RunListEntry[]} (newest first; counters from the run hash)
 * - GET /api/runs/<runId>   → 200 RunStatus (counts, resolvedRate, throughputPerS, etaS); 404 {error} unknown run;
 *                             400 {error} invalid id
 * - GET /runs, /runs/<runId> → the same as HTML pages (auto-refresh), with the run's most recent results.
 * Run ids may contain '/', hence the wildcard routes.
 */
import type { Queue } from 'bullmq';
import { Router, type Request, type Response } from 'express';
import { type EpisodeJobData, type EpisodeResult, getRunStatus, IdSchema, jobIdFor, type Keyspace, type RedisClient, ResultStore } from '@rollout-fleet/shared';
import { renderRunPage, renderRunsIndex, type RunListEntry } from './run-pages.js';

export interface RunRoutesOptions {
  redis: RedisClient;
  keys: Keyspace;
  /** The episodes queue (run status counts its active and delayed jobs). */
  queue: Queue<EpisodeJobData>;
  /** Results listed on a run page. @defaultValue 50 */
  recentResults?: number;
}

/** Pages never embed anything foreign: no scripts at all, inline styles only. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

export function runRoutes(options: RunRoutesOptions): Router {
  const { redis, keys, queue } = options;
  const store = new ResultStore(redis, keys);
  const recentCount = options.recentResults ?? 50;
  const router = Router();

  const listRuns = async (): Promise<RunListEntry[]> => {
    const ids = await redis.smembers(keys.runs());
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.hgetall(keys.run(id));
    const hashes = (await pipeline.exec()) ?? [];
    const runs = ids.map((runId, i) => {
      const hash = (hashes[i]?.[1] ?? {}) as Record<string, string>;
      const num = (field: string): number => Number(hash[field] ?? 0);
      return { runId, createdAt: hash.created_at ?? null, total: num('total'), done: num('done'), completed: num('completed'), failed: num('failed'), resolved: num('resolved') };
    });
    return runs.sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? '') || a.runId.localeCompare(b.runId));
  };

  /** The newest `recentCount` results, newest first, read through the ResultStore. */
  const recentResults = async (runId: string): Promise<EpisodeResult[]> => {
    const newest = await redis.xrevrange(keys.results(runId), '+', '-', 'COUNT', recentCount + 1);
    const after = newest.length > recentCount ? newest[recentCount]?.[0] : '0';
    const results = await store.read(runId, { after, count: recentCount });
    return results.map((r) => r.result).reverse();
  };

  const runIdOf = (req: Request, res: Response): string | undefined => {
    const raw = (req.params as { runId?: string | string[] }).runId;
    const runId = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
    if (IdSchema.safeParse(runId).success) return runId;
    res.status(400).json({ error: 'invalid run id' });
    return undefined;
  };

  router.get('/api/runs', async (_req, res) => {
    res.json({ runs: await listRuns() });
  });
  router.get('/api/runs/*runId', async (req, res) => {
    const runId = runIdOf(req, res);
    if (runId === undefined) return;
    const status = await getRunStatus({ redis, keys, runId });
    if (!status.exists) {
      res.status(404).json({ error: 'run not found', runId });
      return;
    }
    res.json(status);
  });
  router.get('/runs', async (_req, res) => {
    res.setHeader('Content-Security-Policy', PAGE_CSP).type('html').send(renderRunsIndex(await listRuns()));
  });
  router.get('/runs/*runId', async (req, res) => {
    const runId = runIdOf(req, res);
    if (runId === undefined) return;
    const [status, recent] = await Promise.all([getRunStatus({ redis, keys, runId }), recentResults(runId)]);
    const jobLink = (r: EpisodeResult): string =>
      `/queue/${encodeURIComponent(queue.name)}/${encodeURIComponent(jobIdFor(r.run_id, r.episode_id, r.sample_index))}`;
    res
      .status(status.exists ? 200 : 404)
      .setHeader('Content-Security-Policy', PAGE_CSP)
      .type('html')
      .send(renderRunPage({ status, recent, jobLink }));
  });
  return router;
}
