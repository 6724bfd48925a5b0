/**
 * The processor's decisions, directly: a real BullMQ queue and worker on real Redis run the real processor,
 * with the attempt itself scripted (no sandboxes), so each decision is tested on its own: input final, infra
 * retried with every attempt kept, an existing result short-circuits, a duplicate commit of two racing
 * executions stores one, the hard bound, a lost lease, a model error that escapes, the run's cancel flag (before
 * and while running), a forced re-run while running, a lost job lock, and a job re-run after it finished.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Job, Queue, Worker } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  EpisodeSchema,
  ResultStore,
  RolloutError,
  createKeyspace,
  createLogger,
  createRedis,
  jobIdFor,
  type Episode,
  type EpisodeJobData,
  type EpisodeJobReturn,
  type EpisodeResult,
  type RedisClient,
} from '@rollout-fleet/shared';
import { EpisodeWatch } from './episode/episode-watch.js';
import type { AttemptInput, AttemptOutcome } from './episode/run-attempt.js';
import { createWorkerMetrics } from './metrics/worker-metrics.js';
import { createProcessor, type ProcessorDeps } from './processor.js';
import { createLossLedger } from './losses/loss-ledger.js';
import type { SandboxSupply } from '@rollout-fleet/sandbox';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger({ level: 'silent', format: 'json' });

type Runner = (input: AttemptInput) => Promise<AttemptOutcome>;

const EVAL = EpisodeSchema.shape.eval.unwrap().parse({ repo: 'example/pyutils', test_command: 'python3 -m unittest' });

function outcome(overrides: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    steps: [],
    patch: 'diff',
    report: { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: true },
    resolved: true,
    reward: 1,
    failure: null,
    gradedIn: 'fresh',
    sandboxId: 'sbx-1',
    timings: { sandboxAcquireMs: 0, replayMs: 0, gradeMs: 0 },
    ...overrides,
  };
}

describe('processor decisions', () => {
  const prefix = `{rf-test-${randomUUID()}}`;
  const keys = createKeyspace(prefix);
  let redis: RedisClient;
  let queue: Queue<EpisodeJobData, EpisodeJobReturn>;
  let store: ResultStore;
  let worker: Worker<EpisodeJobData, EpisodeJobReturn> | undefined;
  let watch: EpisodeWatch;
  const connections: RedisClient[] = [];

  beforeAll(() => {
    redis = createRedis(redisUrl);
    store = new ResultStore(redis, keys);
    queue = new Queue<EpisodeJobData, EpisodeJobReturn>('episodes', { connection: createRedis(redisUrl), prefix });
    watch = new EpisodeWatch({ redis, keys, logger, intervalMs: 50 });
  });
  afterEach(async () => {
    await worker?.close(true);
    worker = undefined;
  });
  afterAll(async () => {
    watch.close();
    await queue.obliterate({ force: true });
    await queue.close();
    for (const c of connections) c.disconnect();
    const found = await redis.keys(`*${prefix}*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  function deps(runner: Runner): ProcessorDeps {
    return {
      // Only the acquire timeout is read: the attempt itself is scripted.
      supply: { limits: { acquireTimeoutMs: 1000 } } as unknown as SandboxSupply,
      metrics: createWorkerMetrics(),
      workerId: 'test-worker',
      outputLimitBytes: 1000,
      freshEval: true,
      reward: { resolved: 1, unresolved: 0 },
      redis,
      keys,
      // Three clean losses of other episodes within a minute make an outage.
      lossLedger: createLossLedger(redis, keys, { windowS: 60, cleanLosses: 3 }),
      results: store,
      logger,
      shutdown: new AbortController().signal,
      watch,
      runAttempt: (_deps, input) => runner(input),
      attemptMarginS: 0,
    };
  }

  function startWorker(
    runner: Runner,
    options: { lockDuration?: number } = {},
  ): Worker<EpisodeJobData, EpisodeJobReturn> {
    const connection = createRedis(redisUrl, { role: 'blocking' });
    connections.push(connection);
    worker = new Worker<EpisodeJobData, EpisodeJobReturn>('episodes', createProcessor(deps(runner)), {
      connection,
      prefix,
      concurrency: 4,
      lockDuration: options.lockDuration ?? 30_000,
    });
    return worker;
  }

  function episodeOf(runId: string, id: string, limits?: Episode['limits']): Episode {
    return EpisodeSchema.parse({
      run_id: runId,
      episode_id: id,
      instance_id: id,
      sandbox: { image: 'tiny', startup_timeout_s: 0.1 },
      ...(limits ? { limits } : {}),
    });
  }

  async function enqueue(e: Episode, attempts = 3): Promise<Job<EpisodeJobData, EpisodeJobReturn>> {
    await redis.sadd(keys.runJobs(e.run_id), jobIdFor(e.run_id, e.episode_id, 0));
    await redis.hset(keys.run(e.run_id), 'total', await redis.scard(keys.runJobs(e.run_id)));
    return queue.add(
      'ep',
      { episode: e, enqueued_at: new Date().toISOString() },
      { jobId: jobIdFor(e.run_id, e.episode_id, 0), attempts, backoff: { type: 'fixed', delay: 10 } },
    );
  }

  async function finished(jobId: string): Promise<'completed' | 'failed'> {
    let state = '';
    await vi.waitFor(
      async () => {
        state = await queue.getJobState(jobId);
        expect(['completed', 'failed']).toContain(state);
      },
      { timeout: 15_000, interval: 20 },
    );
    return state as 'completed' | 'failed';
  }

  it('input errors are final at once: one attempt, a failed result of class input, reward null', async () => {
    const runId = `r-${randomUUID()}`;
    const runner = vi.fn<Runner>(async () => {
      throw new RolloutError('INPUT_INVALID', 'bad sandbox spec');
    });
    startWorker(runner);
    const job = await enqueue(episodeOf(runId, 'e1'));
    expect(await finished(job.id!)).toBe('failed');
    expect(runner).toHaveBeenCalledTimes(1);
    expect(await store.get(runId, 'e1', 0)).toMatchObject({
      status: 'failed',
      reward: null,
      failure: { code: 'INPUT_INVALID', class: 'input' },
      attempts: [{ attempt: 1 }],
    });
  });

  it('infra errors are retried until attempts run out, every attempt kept; never a reward of 0', async () => {
    const runId = `r-${randomUUID()}`;
    const runner = vi.fn<Runner>(async () => {
      throw new RolloutError('SANDBOX_DEAD', 'gone');
    });
    startWorker(runner);
    const job = await enqueue(episodeOf(runId, 'e1'), 3);
    expect(await finished(job.id!)).toBe('failed');
    expect(runner).toHaveBeenCalledTimes(3);
    const result = await store.get(runId, 'e1', 0);
    expect(result).toMatchObject({
      status: 'failed',
      resolved: null,
      reward: null,
      failure: { code: 'SANDBOX_DEAD', class: 'infra' },
    });
    expect(result?.attempts.map((a) => [a.attempt, a.failure?.code])).toEqual([
      [1, 'SANDBOX_DEAD'],
      [2, 'SANDBOX_DEAD'],
      [3, 'SANDBOX_DEAD'],
    ]);
  });

  it('a lost sandbox lease is infra: retried, and the retry completes with the lost attempt in the history', async () => {
    const runId = `r-${randomUUID()}`;
    let calls = 0;
    startWorker(async () => {
      calls += 1;
      if (calls === 1) throw new RolloutError('LEASE_LOST', 'lease of sandbox sbx-1 expired');
      return outcome();
    });
    const job = await enqueue(episodeOf(runId, 'e1'));
    expect(await finished(job.id!)).toBe('completed');
    const result = await store.get(runId, 'e1', 0);
    expect(result).toMatchObject({ status: 'completed', reward: 1 });
    expect(result?.attempts.map((a) => a.failure?.code ?? 'ok')).toEqual(['LEASE_LOST', 'ok']);
  });

  it("the attempt's hard bound: ATTEMPT_DEADLINE (infra), retried; the attempt sees its signal abort", async () => {
    const runId = `r-${randomUUID()}`;
    const runner = vi.fn<Runner>(async (input) => {
      input.startDeadline?.();
      await once(input.signal, 'abort');
      throw input.signal.reason;
    });
    startWorker(runner);
    const job = await enqueue(episodeOf(runId, 'e1', { step_timeout_s: 0.05, episode_deadline_s: 0.05 }), 2);
    expect(await finished(job.id!)).toBe('failed');
    expect(runner).toHaveBeenCalledTimes(2);
    expect(await store.get(runId, 'e1', 0)).toMatchObject({
      reward: null,
      failure: { code: 'ATTEMPT_DEADLINE', class: 'infra' },
    });
  });

  it('a model-class error that escapes an attempt is our bug (INTERNAL, infra), never a model failure with reward null', async () => {
    const runId = `r-${randomUUID()}`;
    startWorker(async () => {
      throw new RolloutError('SWEREX_BASH_SYNTAX', 'escaped');
    });
    const job = await enqueue(episodeOf(runId, 'e1'), 1);
    expect(await finished(job.id!)).toBe('failed');
    expect(await store.get(runId, 'e1', 0)).toMatchObject({ failure: { code: 'INTERNAL', class: 'infra' } });
  });

  it("a step that kills its own sandbox on every attempt is the model's doing: graded as no patch (reward 0), not null", async () => {
    const runId = `r-${randomUUID()}`;
    const runner = vi.fn<Runner>(async () => {
      throw new RolloutError('SANDBOX_DEAD', 'instance gone', { details: { lostAtStep: 2 } });
    });
    startWorker(runner);
    const graded = { ...episodeOf(runId, 'e1'), eval: EVAL };
    const job = await enqueue(graded, 3);
    expect(await finished(job.id!)).toBe('completed');
    expect(runner).toHaveBeenCalledTimes(3);
    const result = await store.get(runId, 'e1', 0);
    expect(result).toMatchObject({
      status: 'completed',
      resolved: false,
      reward: 0,
      patch: null,
      failure: { code: 'SANDBOX_LOST_IN_STEP', class: 'model' },
    });
    expect(result?.attempts.map((a) => a.lost_at_step)).toEqual([2, 2, 2]);
    // The grading block says why nothing was tested.
    expect(result?.grading).toMatchObject({
      tests_ran: false,
      tests_parsed: 0,
      problem: 'the sandbox died during step 2 in every attempt, leaving no patch: the tests were not run',
    });
  });

  it('a grade carries its grading block into the result, and its summary (with the problem) into the job log', async () => {
    const runId = `r-${randomUUID()}`;
    const grading: NonNullable<AttemptOutcome['grading']> = {
      parser: 'pytest',
      parser_source: 'repository',
      tests_ran: true,
      timed_out: false,
      tests_parsed: 0,
      tests: [
        {
          id: 'test_add (t.C.test_add)',
          list: 'FAIL_TO_PASS',
          status: null,
          outcome: 'failure',
          hint: 'not found in the test log — check the id format for this parser',
        },
      ],
      problem: 'the pytest parser found 0 test results in the eval log',
      log: 'OK\n',
      log_bytes: 3,
      log_truncated: false,
    };
    startWorker(async () =>
      outcome({
        resolved: false,
        reward: 0,
        report: { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: false },
        grading,
      }),
    );
    const job = await enqueue({ ...episodeOf(runId, 'e1'), eval: EVAL });
    expect(await finished(job.id!)).toBe('completed');
    expect((await store.get(runId, 'e1', 0))?.grading).toEqual(grading);
    const { logs } = await queue.getJobLogs(job.id!);
    expect(logs.at(-1)).toBe(
      [
        'graded parser=pytest (repository) tests-parsed=0 FAIL_TO_PASS 0/1 PASS_TO_PASS 0/0 unresolved',
        'WARNING: the pytest parser found 0 test results in the eval log',
        '  not found: test_add (t.C.test_add)',
      ].join('\n'),
    );
  });

  it('sandboxes lost after model commands at a different step or phase in every attempt are the model’s: reward 0', async () => {
    const runId = `r-${randomUUID()}`;
    const losses = [
      { lostAtStep: 1, loss: { lost_after_model: true, lost_in: 'step' } },
      { loss: { lost_after_model: true, lost_in: 'settle' } },
      { loss: { lost_after_model: true, lost_in: 'extract' } },
    ];
    let calls = 0;
    startWorker(async () => {
      const details = losses[calls++] ?? {};
      throw new RolloutError('SANDBOX_DEAD', 'instance gone', { details });
    });
    const job = await enqueue({ ...episodeOf(runId, 'e1'), eval: EVAL }, 3);
    expect(await finished(job.id!)).toBe('completed');
    const result = await store.get(runId, 'e1', 0);
    expect(result).toMatchObject({
      status: 'completed',
      resolved: false,
      reward: 0,
      patch: null,
      failure: { code: 'SANDBOX_LOST_AFTER_MODEL', class: 'model' },
    });
    expect(result?.attempts.map((a) => a.lost_in)).toEqual(['step', 'settle', 'extract']);
  });

  it('one attempt lost before any model command ran makes the losses infra: failed, reward null', async () => {
    const runId = `r-${randomUUID()}`;
    const losses = [
      { lostAtStep: 1, loss: { lost_after_model: true, lost_in: 'step' } },
      { loss: { lost_after_model: false, lost_in: 'setup' } },
      { lostAtStep: 1, loss: { lost_after_model: true, lost_in: 'step' } },
    ];
    let calls = 0;
    startWorker(async () => {
      const details = losses[calls++] ?? {};
      throw new RolloutError('SANDBOX_DEAD', 'instance gone', { details });
    });
    const job = await enqueue({ ...episodeOf(runId, 'e1'), eval: EVAL }, 3);
    expect(await finished(job.id!)).toBe('failed');
    expect(await store.get(runId, 'e1', 0)).toMatchObject({
      status: 'failed',
      reward: null,
      failure: { code: 'SANDBOX_DEAD', class: 'infra' },
    });
  });

  it('losses after model commands during a fleet-wide outage (clean losses in the ledger) are infra: reward null', async () => {
    const runId = `r-${randomUUID()}`;
    const ledger = createLossLedger(redis, keys, { windowS: 60, cleanLosses: 3 });
    for (const other of ['a', 'b', 'c']) await ledger.recordClean(`${runId}|${other}|0`);
    startWorker(async () => {
      throw new RolloutError('SANDBOX_DEAD', 'instance gone', {
        details: { lostAtStep: 1, loss: { lost_after_model: true, lost_in: 'step' } },
      });
    });
    const job = await enqueue({ ...episodeOf(runId, 'e1'), eval: EVAL }, 3);
    expect(await finished(job.id!)).toBe('failed');
    expect(await store.get(runId, 'e1', 0)).toMatchObject({ status: 'failed', reward: null });
    // The outage must not outlive this test: later ones grade model-caused losses.
    await redis.del(keys.sandboxLosses());
  });

  it('an existing result of this job short-circuits: a re-run after a crash returns it without running', async () => {
    const runId = `r-${randomUUID()}`;
    const e = episodeOf(runId, 'e1');
    const job = await enqueue(e);
    // The first execution committed, then its worker died before BullMQ heard of it.
    await store.commit(
      { ...(await resultOf(outcome())), run_id: runId, episode_id: 'e1', instance_id: 'e1' },
      { generation: 0, attemptsMade: 0 },
    );
    const runner = vi.fn<Runner>(async () => outcome());
    startWorker(runner);
    expect(await finished(job.id!)).toBe('completed');
    expect(runner).not.toHaveBeenCalled();
    expect((await queue.getJob(job.id!))?.returnvalue).toMatchObject({ stored: false, status: 'completed' });
    expect(await redis.xlen(keys.results(runId))).toBe(1);
  });

  it('a duplicate commit for real: two executions of one job race to commit; one result is stored, one duplicate counted', async () => {
    const runId = `r-${randomUUID()}`;
    const job = (await enqueue(episodeOf(runId, 'e1'))) as Job<EpisodeJobData, EpisodeJobReturn>;
    let arrived = 0;
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const processor = createProcessor(
      deps(async (input) => {
        arrived += 1;
        if (arrived === 2) release();
        await barrier;
        return outcome({ sandboxId: `sbx-${input.jobId}-${arrived}` });
      }),
    );
    const fetched = (await Job.fromId(queue, job.id!)) as Job<EpisodeJobData, EpisodeJobReturn>;
    const [a, b] = await Promise.all([processor(fetched), processor(fetched)]);
    expect([a.stored, b.stored].sort()).toEqual([false, true]);
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({ done: '1', completed: '1', duplicates: '1' });
    expect(await redis.xlen(keys.results(runId))).toBe(1);
  });

  it('a cancelled run: CANCELLED at once, nothing runs, reward null, not retried', async () => {
    const runId = `r-${randomUUID()}`;
    await redis.hset(keys.run(runId), 'cancelled', '1');
    const runner = vi.fn<Runner>(async () => outcome());
    startWorker(runner);
    const job = await enqueue(episodeOf(runId, 'e1'));
    expect(await finished(job.id!)).toBe('failed');
    expect(runner).not.toHaveBeenCalled();
    expect(await store.get(runId, 'e1', 0)).toMatchObject({
      status: 'failed',
      reward: null,
      failure: { code: 'CANCELLED', class: 'input' },
    });
  });

  it('cancel while running: the attempt is aborted within the poll interval and ends CANCELLED, not retried', async () => {
    const runId = `r-${randomUUID()}`;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const runner = vi.fn<Runner>(async (input) => {
      started();
      await once(input.signal, 'abort');
      throw new RolloutError('SWEREX_NETWORK', 'aborted mid-call');
    });
    startWorker(runner);
    const job = await enqueue(episodeOf(runId, 'e1'));
    await running;
    const cancelledAt = Date.now();
    await redis.hset(keys.run(runId), 'cancelled', '1');
    expect(await finished(job.id!)).toBe('failed');
    expect(Date.now() - cancelledAt).toBeLessThan(2000);
    expect(runner).toHaveBeenCalledTimes(1);
    expect(await store.get(runId, 'e1', 0)).toMatchObject({ reward: null, failure: { code: 'CANCELLED' } });
  });

  it('forced while running: the execution stops, is handed back without an attempt, and re-runs with the new payload', async () => {
    const runId = `r-${randomUUID()}`;
    const seen: string[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    startWorker(async (input) => {
      seen.push(String(input.episode.metadata.version ?? 'v1'));
      if (seen.length === 1) {
        started();
        await once(input.signal, 'abort');
        throw input.signal.reason;
      }
      return outcome();
    });
    const e = episodeOf(runId, 'e1');
    const job = await enqueue(e);
    await running;
    // What submit --force does to a running job: new payload first, then the retract (generation + 1).
    await job.updateData({
      episode: { ...e, metadata: { version: 'v2' } },
      enqueued_at: new Date().toISOString(),
      attempts: [],
    });
    await store.retract({ runId, episodeId: 'e1', sampleIndex: 0 });
    expect(await finished(job.id!)).toBe('completed');
    expect(seen).toEqual(['v1', 'v2']);
    const result = await store.get(runId, 'e1', 0);
    expect(result?.attempts).toHaveLength(1);
    expect((await queue.getJob(job.id!))?.attemptsMade).toBe(1);
  });

  it('a lost job lock: the attempt stops and writes nothing; the job runs again', async () => {
    const runId = `r-${randomUUID()}`;
    let calls = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const w = startWorker(async (input) => {
      calls += 1;
      if (calls === 1) {
        started();
        await once(input.signal, 'abort');
        throw new RolloutError('SWEREX_NETWORK', 'aborted mid-call');
      }
      return outcome();
    });
    const job = await enqueue(episodeOf(runId, 'e1'));
    await running;
    // What the worker's lockRenewalFailed handler does.
    w.cancelJob(job.id!, 'the lock could not be renewed');
    expect(await finished(job.id!)).toBe('completed');
    const result = await store.get(runId, 'e1', 0);
    // The stopped execution recorded nothing of its own.
    expect(result?.attempts.map((a) => a.failure)).toEqual([null]);
    expect(calls).toBe(2);
  });

  it("a job re-run after it finished (the dashboard's retry) runs again and replaces its result; history kept, one line", async () => {
    const runId = `r-${randomUUID()}`;
    let calls = 0;
    startWorker(async () => {
      calls += 1;
      return calls === 1 ? outcome({ resolved: false, reward: 0 }) : outcome();
    });
    const job = await enqueue(episodeOf(runId, 'e1'));
    expect(await finished(job.id!)).toBe('completed');
    expect((await store.get(runId, 'e1', 0))?.reward).toBe(0);
    await (await queue.getJob(job.id!))!.retry('completed');
    await vi.waitFor(async () => expect(calls).toBe(2), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect((await store.get(runId, 'e1', 0))?.reward).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    const result = await store.get(runId, 'e1', 0);
    expect(result?.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(await redis.xlen(keys.results(runId))).toBe(1);
    expect(await redis.hgetall(keys.run(runId))).toMatchObject({ done: '1', completed: '1', resolved: '1' });
  });
});

async function resultOf(o: AttemptOutcome): Promise<EpisodeResult> {
  return {
    run_id: '',
    episode_id: '',
    instance_id: '',
    sample_index: 0,
    status: 'completed',
    resolved: o.resolved,
    reward: o.reward,
    steps: o.steps,
    patch: o.patch,
    report: o.report,
    timings: { queue_wait_ms: 0, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 0 },
    attempts: [{ attempt: 1, worker_id: 'earlier', sandbox_id: null, started_at: '', ended_at: '', failure: null }],
    failure: null,
    worker_id: 'earlier',
    sandbox_id: null,
    finished_at: new Date().toISOString(),
    metadata: {},
  };
}
