/**
 * Run endpoints. Wire contract (HTTP, behind the dashboard's auth):
 * - GET /api/runs           → 200 {runs: RunListEntry[]} (newest first; counters from the run hash)
 * - GET /api/runs/<runId>   → 200 RunStatus (counts, resolvedRate, throughputPerS, etaS); 404 {error} unknown run;
 *                             400 {error} invalid id
 * - GET /runs, /runs/<runId> → the same as HTML pages (auto-refresh), with the run's most recent results.
 * - GET /episodes/<jobId>   → the episode viewer of one result (jobId = `run|episode|sample`, URL-encoded; the
 *                             BullMQ job id, so Bull Board links to it); 404 without a result, 400 invalid id.
 * Run ids may contain '/', hence the wildcard routes.
 */
import type { Queue } from 'bullmq';
import { Router, type Request, type Response } from 'express';
import {
  EpisodeResultSchema,
  type EpisodeJobData,
  type EpisodeResult,
  closestNames,
  getRunStatus,
  IdSchema,
  INSTANCE_FILES,
  type InstanceFileName,
  instanceLayout,
  jobIdFor,
  type Keyspace,
  parseJobId,
  parseResultValue,
  redactJobData,
  type RedisClient,
  ResultStore,
  type ToolCall,
} from '@rollout-fleet/shared';
import { renderEpisodePage } from './episode-page.js';
import { renderRunPage, renderRunsIndex, type RunListEntry } from './run-pages.js';

/** Where the episode viewer shows one result (its BullMQ job id). */
export function episodeViewerPath(jobId: string): string {
  return `/episodes/${encodeURIComponent(jobId)}`;
}

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
      return {
        runId,
        createdAt: hash.created_at ?? null,
        total: num('total'),
        done: num('done'),
        completed: num('completed'),
        failed: num('failed'),
        resolved: num('resolved'),
        cancelled: hash.cancelled === '1',
      };
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

  /** Known run ids close to a mistyped one (the same suggestions the CLI and the API give). */
  const closestRuns = async (runId: string): Promise<string[]> =>
    closestNames(runId, (await redis.smembers(keys.runs())).sort(), 3);

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
      res.status(404).json({ error: 'run not found', runId, didYouMean: await closestRuns(runId) });
      return;
    }
    res.json(status);
  });
  router.get('/runs', async (_req, res) => {
    res
      .setHeader('Content-Security-Policy', PAGE_CSP)
      .type('html')
      .send(renderRunsIndex(await listRuns()));
  });
  router.get('/runs/*runId', async (req, res) => {
    const runId = runIdOf(req, res);
    if (runId === undefined) return;
    const [status, recent] = await Promise.all([getRunStatus({ redis, keys, runId }), recentResults(runId)]);
    const jobLink = (r: EpisodeResult): string => bullBoardJobPath(jobIdFor(r.run_id, r.episode_id, r.sample_index));
    const viewerLink = (r: EpisodeResult): string =>
      episodeViewerPath(jobIdFor(r.run_id, r.episode_id, r.sample_index));
    res
      .status(status.exists ? 200 : 404)
      .setHeader('Content-Security-Policy', PAGE_CSP)
      .type('html')
      .send(
        renderRunPage({
          status,
          recent,
          jobLink,
          viewerLink,
          ...(status.exists ? {} : { didYouMean: await closestRuns(runId) }),
        }),
      );
  });
  const bullBoardJobPath = (jobId: string): string =>
    `/queue/${encodeURIComponent(queue.name)}/${encodeURIComponent(jobId)}`;
  /**
   * The episode's result as shown (through the job's own redaction) and its recorded trajectory; undefined once the
   * answer is sent (a bad id: 400, no result: 404).
   */
  const shownEpisode = async (
    jobId: string,
    res: Response,
  ): Promise<{ shown: EpisodeResult; recorded: ToolCall[] | undefined } | undefined> => {
    const parsed = parseJobId(jobId);
    if (
      parsed === undefined ||
      !IdSchema.safeParse(parsed.runId).success ||
      !IdSchema.safeParse(parsed.episodeId).success
    ) {
      res.status(400).type('text/plain').send('invalid episode id: expected run|episode|sample\n');
      return undefined;
    }
    const stored = await redis.getBuffer(keys.result(parsed.runId, parsed.episodeId, parsed.sampleIndex));
    const rawResult = stored === null ? undefined : (parseResultValue(stored) as Record<string, unknown>);
    const result = rawResult === undefined ? undefined : EpisodeResultSchema.safeParse(rawResult);
    if (rawResult === undefined || result === undefined || !result.success) {
      res.status(404).type('text/plain').send(`no result for ${jobId} (not finished yet, or past retention)\n`);
      return undefined;
    }
    // The recorded observations live in the episode, i.e. the job's data, while BullMQ keeps the job.
    const job = await queue.getJob(jobId).catch(() => undefined);
    // Step outputs, recorded observations and the eval log are whatever a sandbox printed, the episode's env
    // values included if a command echoed them: shown through the job's own redaction (its secrets, when kept).
    const recorded = (redactJobData(job?.data) as { episode?: { trajectory?: ToolCall[] } } | undefined)?.episode
      ?.trajectory;
    return {
      shown: redactJobData(result.data, job?.data ?? result.data),
      recorded: Array.isArray(recorded) ? recorded : undefined,
    };
  };
  const jobIdOf = (req: Request): string => {
    const raw = (req.params as { jobId?: string | string[] }).jobId;
    return Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  };
  const fileLink = (jobId: string) => (name: string) => `/episode-files/${name}/${encodeURIComponent(jobId)}`;
  router.get('/episodes/*jobId', async (req, res) => {
    const jobId = jobIdOf(req);
    const episode = await shownEpisode(jobId, res);
    if (episode === undefined) return;
    res
      .setHeader('Content-Security-Policy', PAGE_CSP)
      .type('html')
      .send(
        renderEpisodePage({
          result: episode.shown,
          jobLink: bullBoardJobPath(jobId),
          fileLink: fileLink(jobId),
          ...(episode.recorded ? { recorded: episode.recorded } : {}),
        }),
      );
  });
  // One file of the episode's directory in SWE-bench's evaluation tree (swebench-layout.ts), as plain text.
  router.get('/episode-files/:file/*jobId', async (req, res) => {
    const name = (req.params as { file?: string }).file ?? '';
    if (!(INSTANCE_FILES as readonly string[]).includes(name)) {
      res
        .status(404)
        .type('text/plain')
        .send(`no such file: expected one of ${INSTANCE_FILES.join(', ')}\n`);
      return;
    }
    const jobId = jobIdOf(req);
    const episode = await shownEpisode(jobId, res);
    if (episode === undefined) return;
    const content = instanceLayout(episode.shown).files[name as InstanceFileName];
    if (content === undefined) {
      res.status(404).type('text/plain').send(`${jobId} has no ${name} (SWE-bench would not write one for it)\n`);
      return;
    }
    res
      .setHeader('Content-Security-Policy', PAGE_CSP)
      .setHeader('X-Content-Type-Options', 'nosniff')
      .type(name.endsWith('.json') ? 'application/json' : 'text/plain')
      .send(content);
  });
  return router;
}
