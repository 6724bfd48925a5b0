/**
 * The invariants of outcome integrity under chaos (issue #9, randomized, seeded: RF_TEST_SEED). Real worker
 * processes (test/support/chaos-worker.ts) kill themselves with SIGKILL at random points — between
 * CreateSandbox and the lease recording it, when grading starts, after the result commit but before the job
 * completes — and are restarted; meanwhile this test forces re-submits of episodes that already finished and
 * recounts the run's counters on every new result. When everything has settled:
 * - one result per job (one index entry, one stream line);
 * - the run's counters equal the results;
 * - no null reward for a model failure (a broken shell, a deleted .git are graded);
 * - no 0 for an infrastructure failure (an episode that resolves is 1 or, if infra kept failing, null);
 * - no sandbox left behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Episode, EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import {
  ROOT,
  SWEEP,
  childEnv,
  configOf,
  fleetSandboxes,
  openPipeline,
  readSweep,
  resultsOf,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const SEED = Number(process.env.RF_TEST_SEED ?? 20261130);
const WORKERS = 3;
const RUN = 'chaos';

const bash = (command: string): Episode['trajectory'][number] => ({ name: 'execute_bash', arguments: { command } });
const FIX = bash("sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py");

/** What each kind of episode may end as: a model outcome is always graded; infra may end null, never 0. */
type Kind = 'fix' | 'wrong' | 'broken-shell' | 'no-git' | 'infra';

describe('outcome integrity under random crashes and races', () => {
  let host: Host;
  let pipeline: Pipeline;
  let env: Record<string, string>;
  const children = new Set<ChildProcess>();
  let stopping = false;
  let restarts = 0;
  const kinds = new Map<string, Kind>();

  beforeAll(async () => {
    host = await startHost();
    env = testEnv({
      RF_LOCK_DURATION_MS: '2000',
      RF_STALLED_INTERVAL_MS: '1000',
      RF_LEASE_TTL_S: '3',
      RF_REAPER_INTERVAL_S: '1',
      RF_BACKOFF_MS: '200',
      RF_CANCEL_POLL_MS: '200',
      RF_ATTEMPTS: '3',
      LOG_LEVEL: 'warn',
    });
    pipeline = openPipeline(configOf(env));
  });

  afterAll(async () => {
    stopping = true;
    for (const child of children) child.kill('SIGKILL');
    await pipeline?.close();
    await host?.close();
  });

  function spawnWorker(seed: number): void {
    const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}test/support/chaos-worker.ts`], {
      cwd: ROOT,
      env: childEnv({
        ...env,
        CHAOS_ENDPOINT: host.handle.controlPlaneUrl,
        CHAOS_ROUTE: host.handle.gatewayUrl,
        CHAOS_FUNCTION: host.handle.functionId,
        CHAOS_ACCESS_KEY: host.handle.accessKeyId,
        CHAOS_SECRET_KEY: host.handle.secretAccessKey,
        CHAOS_SEED: String(seed),
        CHAOS_P: '0.15',
      }),
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.add(child);
    child.once('exit', () => {
      children.delete(child);
      // A crashed worker comes back, as a supervisor (systemd, Kubernetes) would bring it back.
      if (!stopping) {
        restarts += 1;
        spawnWorker(seed * 31 + restarts);
      }
    });
  }

  function episodes(template: Episode): Episode[] {
    const make = (id: string, kind: Kind, patch: Partial<Episode>): Episode => {
      kinds.set(id, kind);
      return { ...template, run_id: RUN, episode_id: id, ...patch };
    };
    return [
      make('fix-1', 'fix', {}),
      make('fix-2', 'fix', {}),
      make('wrong-1', 'wrong', { trajectory: [bash("echo '# nothing useful' >> /testbed/pyutils/calc.py")] }),
      make('wrong-2', 'wrong', {
        trajectory: [bash("sed -i 's/return a - b/return b - a/' /testbed/pyutils/calc.py")],
      }),
      make('shell-1', 'broken-shell', { trajectory: [bash('exit'), FIX] }),
      make('shell-2', 'broken-shell', { trajectory: [bash('kill -9 $$'), FIX] }),
      make('no-git', 'no-git', { trajectory: [FIX, bash('rm -rf /testbed/.git')] }),
      make('infra', 'infra', { sandbox: { ...template.sandbox, image: 'no-such-image' } }),
    ];
  }

  it('keeps one result per job, exact counters, graded model failures and null-only infra failures', async () => {
    let state = SEED;
    const random = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const template = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: RUN }).episodes.find(
      (e) => e.episode_id === 'pyutils__calc-add',
    ) as Episode;
    const all = episodes(template);
    const policy = { attempts: 3, backoffMs: 200, retentionS: 3600 };
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: all,
      policy,
    });
    for (let i = 0; i < WORKERS; i++) spawnWorker(SEED + i);

    // Races, driven by the results as they come: a recount after each, and forced re-submits of finished ones.
    const forced = new Set<string>();
    const controller = new AbortController();
    const racing = (async () => {
      for await (const item of pipeline.store.follow(RUN, { signal: controller.signal, blockMs: 200 })) {
        await pipeline.store.recount(RUN);
        if (forced.size < 3 && random() < 0.5 && !forced.has(item.result.episode_id)) {
          forced.add(item.result.episode_id);
          const episode = all.find((e) => e.episode_id === item.result.episode_id) as Episode;
          await submitRun({
            queue: pipeline.queue,
            redis: pipeline.redis,
            keys: pipeline.keys,
            runId: RUN,
            episodes: [episode],
            force: true,
            policy,
          });
        }
      }
    })();

    const settled = async (): Promise<void> => {
      const [done, total] = await pipeline.redis.hmget(pipeline.keys.run(RUN), 'done', 'total');
      expect(Number(done)).toBe(all.length);
      expect(Number(total)).toBe(all.length);
      const counts = await pipeline.queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
      expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(0);
    };
    try {
      await vi.waitFor(settled, { timeout: 150_000, interval: 250 }).catch(async (err: unknown) => {
        // A run that does not settle says which job it waits for and what that job last did.
        throw new Error(`${(err as Error).message}\n${await unsettled(pipeline, all)}`, { cause: err });
      });
    } finally {
      controller.abort();
      await racing.catch(() => undefined);
    }
    // The last worker's reaper clears what the crashes left behind, then everyone stops.
    await vi.waitFor(async () => expect(await fleetSandboxes(host, pipeline.config)).toEqual([]), {
      timeout: 30_000,
      interval: 250,
    });
    stopping = true;
    await Promise.all(
      [...children].map(async (child) => {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }),
    );

    const results = await resultsOf(pipeline, RUN);
    const context = `seed ${SEED}, ${restarts} worker restart(s), forced ${[...forced].join(',')}`;
    // One result per job.
    expect(results.map((r) => r.episode_id).sort(), context).toEqual(all.map((e) => e.episode_id).sort());
    expect(await pipeline.redis.hlen(pipeline.keys.resultIndex(RUN))).toBe(all.length);
    expect(await pipeline.redis.xlen(pipeline.keys.results(RUN))).toBe(all.length);
    // Counters equal the results.
    const counted = await pipeline.redis.hgetall(pipeline.keys.run(RUN));
    expect(counted, context).toMatchObject({
      done: String(results.length),
      completed: String(results.filter((r) => r.status === 'completed').length),
      failed: String(results.filter((r) => r.status === 'failed').length),
      resolved: String(results.filter((r) => r.resolved === true).length),
    });
    for (const r of results) expectAllowed(r, kinds.get(r.episode_id) as Kind, context);
    // Every forced episode's result is its new one: it carries the earlier attempts.
    for (const id of forced) {
      const r = results.find((x) => x.episode_id === id);
      const trail = JSON.stringify({
        status: r?.status,
        failure: r?.failure?.code,
        attempts: r?.attempts.map((a) => [a.attempt, a.worker_id, a.failure?.code ?? null, a.started_at]),
      });
      expect(r?.attempts.length ?? 0, `${id}: ${context} ${trail}`).toBeGreaterThanOrEqual(2);
    }
    for (const e of all)
      expect(await pipeline.store.state({ runId: RUN, episodeId: e.episode_id, sampleIndex: 0 })).toMatchObject({
        current: { status: expect.any(String) },
      });
  }, 240_000);
});

/** The jobs still pending and the episodes without a result, with each pending job's state and last log lines. */
async function unsettled(pipeline: Pipeline, all: Episode[]): Promise<string> {
  const lines: string[] = [];
  const indexed = await pipeline.redis.hkeys(pipeline.keys.resultIndex(RUN));
  lines.push(
    `episodes without a result: ${
      all
        .map((e) => e.episode_id)
        .filter((id) => !indexed.some((key) => key.includes(id)))
        .join(', ') || 'none'
    }`,
  );
  for (const job of await pipeline.queue.getJobs(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children'])) {
    const state = await job.getState();
    const { logs } = await pipeline.queue.getJobLogs(job.id ?? '', -20, -1);
    const age = job.processedOn
      ? `${Math.round((Date.now() - job.processedOn) / 1000)} s since it started`
      : 'not started';
    lines.push(
      `job ${job.id} (${job.name}): ${state}, ${job.attemptsMade} attempt(s) made, ${age}, progress ${JSON.stringify(job.progress)}`,
    );
    for (const log of logs) lines.push(`  log: ${log}`);
  }
  return lines.join('\n');
}

function expectAllowed(r: EpisodeResult, kind: Kind, context: string): void {
  const where = `${r.episode_id} (${kind}): ${context}: ${JSON.stringify({ status: r.status, reward: r.reward, failure: r.failure })}`;
  if (r.status === 'failed') {
    // A failed result is never a model failure and never has a reward (not even 0).
    expect(r.reward, where).toBeNull();
    expect(['infra', 'input'], where).toContain(r.failure?.class);
    expect(kind === 'infra' || r.failure?.class === 'infra', where).toBe(true);
    return;
  }
  expect(kind, where).not.toBe('infra');
  // Completed: graded, so never null — whatever the model broke.
  expect(r.reward, where).not.toBeNull();
  if (r.failure) expect(r.failure.class, where).toBe('model');
  if (kind === 'fix' || kind === 'broken-shell') expect(r.reward, where).toBe(1);
  if (kind === 'wrong') expect(r.reward, where).toBe(0);
  if (kind === 'no-git') expect(r, where).toMatchObject({ reward: 0, failure: { code: 'PATCH_EXTRACTION_FAILED' } });
}
