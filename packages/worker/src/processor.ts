/**
 * The BullMQ processor: one job = one (run, episode, sample). Decides, at one boundary, what each
 * outcome means for the job:
 * - a result of this job's current run already stored (a stalled job re-run after the first execution
 *   committed) → returned as is; a result from before the job last finished (the dashboard's retry) → retracted
 *   and the episode runs again, its attempt history carried over;
 * - the run is cancelled → a `CANCELLED` failure at once, or within a second while running (EpisodeWatch);
 * - forced or retried while running (its generation moved on) → stopped and handed back without using an
 *   attempt; it runs again with the new payload;
 * - input → failed at once (UnrecoverableError); infra → retried with back-off until attempts run out, every
 *   attempt kept in the result; shutdown → handed back; a lost job lock → stopped, nothing written (the job
 *   is another worker's now).
 * The result is committed exactly once per generation (commit-result.lua), even if BullMQ runs the job twice.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import {
  EpisodeSchema,
  RolloutError,
  MIN_MASKED_LENGTH,
  buildFailedResult,
  childLogger,
  coerceError,
  createSecretMasker,
  episodeSecrets,
  linkedAbort,
  parseJobId,
  toFailure,
  type Attempt,
  type CommitFence,
  type Episode,
  type EpisodeJobData,
  type EpisodeJobReturn,
  type EpisodeRef,
  type EpisodeResult,
  type Keyspace,
  type Logger,
  type RedisClient,
  type ResultStore,
  type SecretMasker,
} from '@rollout-fleet/shared';
import type { EpisodeWatch } from './episode/episode-watch.js';
import type { AttemptDeps, AttemptInput, AttemptOutcome } from './episode/run-attempt.js';
import { runWithBackup, type AttemptTrace } from './episode/run-with-backup.js';
import type { StragglerPolicy } from './episode/stragglers.js';
import { countFinished, outcomeOf } from './metrics/worker-metrics.js';
import {
  formatGradingLog,
  formatStepLog,
  formatTurnLog,
  stepProgress,
  turnProgress,
  type EpisodeProgress,
} from './episode/job-progress.js';
import { escapedError } from './grading/verdict.js';
import type { LossLedger } from './losses/loss-ledger.js';
import { modelLossVerdict } from './losses/model-loss.js';
import { integrityVerdictOf } from './integrity/integrity-verdict.js';
import { createJobLogWriter } from './episode/job-logs.js';
import { executionOf } from './jobs/job-execution.js';
import { ProgressBatcher } from './episode/progress-batcher.js';
import { writeArtifacts } from './episode/artifacts.js';
import type { RunActivity } from './episode/run-activity.js';

export interface ProcessorDeps extends AttemptDeps {
  redis: RedisClient;
  keys: Keyspace;
  results: ResultStore;
  logger: Logger;
  /** Aborted when the worker shuts down and its grace period is over. */
  shutdown: AbortSignal;
  /** Per-run running/retrying counters for `status` (absent: not kept). */
  activity?: RunActivity;
  /** How often per-step progress and log rows are written to Redis, ms. @defaultValue 1000 */
  progressIntervalMs?: number;
  /** When a straggling attempt gets a backup copy (absent: never). */
  stragglers?: StragglerPolicy;
  /** Stops running episodes whose run was cancelled or that were forced / retried. */
  watch: EpisodeWatch;
  /** Runs one attempt. @defaultValue the replay runner (run-attempt.ts) */
  runAttempt?: (deps: AttemptDeps, input: AttemptInput) => Promise<AttemptOutcome>;
  /** Set-up margin of the attempt's hard bound, seconds (see attemptBoundMs). @defaultValue 300 */
  attemptMarginS?: number;
  /** The fleet's clean sandbox losses (absent: no outage evidence is kept or read). */
  lossLedger?: LossLedger;
}

export type EpisodeProcessor = (
  job: Job<EpisodeJobData, EpisodeJobReturn>,
  token?: string,
  signal?: AbortSignal,
) => Promise<EpisodeJobReturn>;

type EpisodeJob = Job<EpisodeJobData, EpisodeJobReturn>;

export function createProcessor(deps: ProcessorDeps): EpisodeProcessor {
  // Job-log rows of all running episodes, a pipeline per event-loop turn.
  const appendLogs = createJobLogWriter(deps.redis);
  return async (job, token, jobSignal) => {
    const startedAt = new Date();
    const ref = refOf(job);
    const parsed = EpisodeSchema.safeParse(job.data.episode);
    if (!parsed.success) {
      const failure = new RolloutError(
        'INPUT_INVALID',
        `episode payload invalid: ${parsed.error.issues[0]?.message ?? 'unknown'}`,
      );
      if (ref) {
        const { generation } = await deps.results.begin(ref, executionOf(job));
        const attempts = [
          ...(job.data.attempts ?? []),
          attemptRecord(deps, (job.data.attempts?.length ?? 0) + 1, null, startedAt, toFailure(failure)),
        ];
        await commitFailure(
          deps,
          job,
          ref,
          { err: failure, attempts, startedAt, sandboxId: null },
          { generation, attemptsMade: job.attemptsMade },
        );
      }
      throw new UnrecoverableError(failure.message);
    }
    const episode = parsed.data;
    const episodeRef: EpisodeRef = {
      runId: episode.run_id,
      episodeId: episode.episode_id,
      sampleIndex: episode.sample_index,
    };
    const logger = childLogger(deps.logger, { runId: episode.run_id, episodeId: episode.episode_id, jobId: job.id });

    const claimed = await claim(deps, job, episodeRef, logger);
    if ('done' in claimed) return pointer(deps, episode, claimed.done);
    const { generation, history } = claimed;
    const attemptNo = history.length + 1;
    const fence: CommitFence = { generation, attemptsMade: job.attemptsMade };
    const log = logger.child({ attempt: attemptNo });
    const masker = secretMaskerOf(episode, log);

    if ((await deps.redis.hget(deps.keys.run(episode.run_id), 'cancelled')) === '1') {
      const err = new RolloutError('CANCELLED', `run ${episode.run_id} was cancelled`);
      const attempts = [...history, attemptRecord(deps, attemptNo, null, startedAt, toFailure(err))];
      await commitFailure(deps, job, episodeRef, { err, attempts, startedAt, sandboxId: null, masker }, fence);
      throw new UnrecoverableError(err.message);
    }

    const watched = deps.watch.track({ ...episodeRef, generation });
    // The clocks start once the sandbox is held: waiting for one (fleet create rate, caps, 429s) is bounded by
    // the supply's acquire timeout instead, and never spends an attempt by itself. The episode deadline is the
    // model's time (no step starts after it; graded); the attempt's hard bound around it is ours (infra).
    const deadlineMs = episode.limits.episode_deadline_s * 1000;
    const boundMs = attemptBoundMs(episode, deps.attemptMarginS);
    const deadlineControl = new AbortController();
    const deadline = deadlineControl.signal;
    let deadlineTimer: NodeJS.Timeout | undefined;
    const startDeadline = (): { deadline: number; episodeDeadline: number } => {
      deadlineTimer ??= setTimeout(
        () => deadlineControl.abort(new RolloutError('ATTEMPT_DEADLINE', 'attempt bound')),
        boundMs,
      );
      return { deadline: Date.now() + boundMs, episodeDeadline: Date.now() + deadlineMs };
    };
    let sandboxId: string | null = null;
    const started = performance.now();
    const jobId = job.id ?? '';
    await deps.activity?.start(episode.run_id, jobId);
    let retrying = false;
    // Progress and log rows are batched: the step loop never waits for Redis (bench/step-overhead.ts).
    const progress = new ProgressBatcher<EpisodeProgress>(
      {
        updateProgress: (p) => job.updateProgress(p),
        logRows: (rows) => appendLogs(job, masker ? rows.map(masker.mask) : rows),
      },
      { logger, ...(deps.progressIntervalMs === undefined ? {} : { intervalMs: deps.progressIntervalMs }) },
    );
    // Disposed in the finally: the shutdown signal lives as long as the worker.
    const attemptAbort = linkedAbort([deadline, deps.shutdown, watched.signal, jobSignal]);
    const signal = attemptAbort.signal;
    try {
      const { outcome, traces } = await runWithBackup(deps, {
        episode,
        jobId,
        logger: log,
        signal,
        deadline: Date.now() + deps.supply.limits.acquireTimeoutMs + boundMs,
        startDeadline,
        mask: masker?.mask,
        onSandbox: (id, backup) => {
          if (!backup) sandboxId = id;
          log.info({ sandboxId: id, backup }, 'sandbox acquired');
        },
        onStep: async (step, total) => {
          progress.push(stepProgress(step.index + 1, total), formatStepLog(step, total));
        },
        onTurn: async (turn, steps, maxTurns) => {
          progress.push(turnProgress(turn.index + 1, maxTurns), formatTurnLog(turn, steps, maxTurns));
        },
      });
      const attempts: Attempt[] = [...history, ...traces.map((t) => tracedAttempt(deps, attemptNo, t))];
      const built = buildResult(deps, job, { episode, outcome, attempts, startedAt, masker });
      const result = await withArtifacts(deps, built, { outcome, masker, attempt: attemptNo, log });
      if (result.grading !== undefined) {
        progress.log(formatGradingLog(result.grading, result.resolved === true));
        // Zero tests parsed grades every listed test as failed: say so where operators look, not only in the result.
        if (result.grading.problem !== null && result.grading.tests_ran) {
          log.warn(
            {
              parser: result.grading.parser,
              testsParsed: result.grading.tests_parsed,
              problem: result.grading.problem,
            },
            'grading problem',
          );
        }
      }
      deps.metrics.episodeSeconds.observe({ outcome: outcomeOf(result) }, (performance.now() - started) / 1000);
      const committed = await deps.results.commit(result, fence);
      if (committed.reason === 'stale')
        return await handBack(
          job,
          token,
          new RolloutError('SUPERSEDED', 'the episode was forced or retried while it ran'),
          log,
        );
      if (committed.stored) countFinished(deps.metrics, result);
      else deps.metrics.duplicateResults.inc();
      // The run's attempt times feed the straggler policy's p90.
      if (committed.stored)
        await deps.stragglers?.record(episode.run_id, performance.now() - started).catch(() => undefined);
      log.info({ resolved: result.resolved, reward: result.reward, stored: committed.stored }, 'episode finished');
      return pointer(deps, episode, result, committed.stored);
    } catch (thrown) {
      if (thrown instanceof DelayedError) throw thrown;
      const err = reasonOf(thrown, {
        shutdown: deps.shutdown,
        job: jobSignal,
        watch: watched.signal,
        deadline,
        boundS: Math.round(boundMs / 1000),
      });
      if (err.code === 'WORKER_SHUTDOWN' || err.code === 'SUPERSEDED') return await handBack(job, token, err, log);
      // The lock is gone, so is the job: another worker runs it. Writing anything would race that worker.
      if (err.code === 'JOB_LOCK_LOST') {
        log.warn({ err }, 'job lock lost: attempt stopped, sandbox killed');
        throw err;
      }
      // Failed attempts count in the duration histogram too (outcome "failed"), or slow failures stay invisible.
      deps.metrics.episodeSeconds.observe({ outcome: 'failed' }, (performance.now() - started) / 1000);
      const lostAt = typeof err.details.lostAtStep === 'number' ? err.details.lostAtStep : undefined;
      const loss = (err.details.loss ?? {}) as Partial<Attempt>;
      const record = {
        ...attemptRecord(deps, attemptNo, sandboxId, startedAt, toFailure(err)),
        ...(lostAt === undefined ? {} : { lost_at_step: lostAt }),
        ...loss,
      };
      const attempts = [...history, record];
      const label = `${episode.run_id}|${episode.episode_id}|${episode.sample_index}`;
      // A loss before any model command ran is the platform's: fleet-wide evidence of an outage.
      if (loss.lost_after_model === false)
        await deps.lossLedger
          ?.recordClean(label)
          .catch((e: unknown) => log.warn({ err: e }, 'could not record the clean sandbox loss'));
      const final = err.class === 'input' || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      log.warn({ err, final }, 'episode attempt failed');
      const verdict = final
        ? await modelLossVerdict({
            attempts,
            n: job.attemptsMade + 1,
            spec: episode.eval,
            rewards: deps.reward,
            ledger: deps.lossLedger,
            label,
          })
        : undefined;
      if (verdict !== undefined) {
        // Every attempt lost its sandbox after the model's commands ran, and nothing says the platform did it: the
        // episode is graded as leaving no patch instead of being retried into a null reward.
        const outcome: AttemptOutcome = {
          ...verdict,
          steps: [],
          sandboxId: null,
          timings: { sandboxAcquireMs: 0, replayMs: 0, gradeMs: 0 },
        };
        const result = buildResult(deps, job, { episode, outcome, attempts, startedAt, masker });
        const committed = await deps.results.commit(result, fence);
        if (committed.stored) countFinished(deps.metrics, result);
        log.warn(
          { code: verdict.failure?.code },
          'the sandbox was lost after model commands in every attempt: graded as no patch',
        );
        return pointer(deps, episode, result, committed.stored);
      }
      if (final) {
        await commitFailure(deps, job, episodeRef, { err, attempts, startedAt, sandboxId, masker }, fence);
        if (err.class === 'input') throw new UnrecoverableError(err.message);
        throw err;
      }
      deps.metrics.retries.inc({ code: err.code });
      await job.updateData({ ...job.data, attempts });
      retrying = true;
      throw err;
    } finally {
      clearTimeout(deadlineTimer);
      attemptAbort.dispose();
      await progress.close();
      await deps.activity
        ?.finish(episode.run_id, jobId, retrying)
        .catch((err: unknown) => log.warn({ err }, 'could not update run counters'));
      watched.stop();
    }
  };
}

/**
 * Decides whether this execution runs: a result this job's current run already committed is returned
 * (`done`); a result from before the job last finished is retracted (the job was re-run from outside, e.g.
 * the dashboard's retry) and the episode runs in the next generation with that result's attempts as history.
 * Reading the generation begins the execution (ResultStore.begin): a pending re-run of a force is met by it.
 */
async function claim(
  deps: ProcessorDeps,
  job: EpisodeJob,
  ref: EpisodeRef,
  logger: Logger,
): Promise<{ done: EpisodeResult } | { generation: number; history: Attempt[] }> {
  for (;;) {
    const { generation, current } = await deps.results.begin(ref, executionOf(job));
    if (!current) return { generation, history: job.data.attempts ?? [] };
    if (current.attemptsMade >= job.attemptsMade) {
      const stored = await deps.results.get(ref.runId, ref.episodeId, ref.sampleIndex);
      if (stored) return { done: stored };
    }
    const retracted = await deps.results.retract(ref, { expectedStreamId: current.streamId });
    if ('conflict' in retracted) continue;
    logger.info({ previous: current.status }, 'job re-run after it finished: its result is replaced');
    return {
      generation: retracted.generation,
      history: retracted.retracted ? retracted.previous.attempts : (job.data.attempts ?? []),
    };
  }
}

/** Moves the job back to the queue without spending an attempt (shutdown, superseded). */
async function handBack(job: EpisodeJob, token: string | undefined, err: RolloutError, logger: Logger): Promise<never> {
  if (!token) throw err;
  logger.warn({ code: err.code }, 'episode handed back to the queue');
  await job.moveToDelayed(Date.now(), token);
  throw new DelayedError();
}

/**
 * The hard bound of one attempt, from the moment it holds its sandbox: the model's time (the episode deadline,
 * which only ends the steps) plus what our side may need around it — the step that overruns it, a second
 * sandbox start, two grading rounds, set-up margin. Hitting it is infra (ATTEMPT_DEADLINE): something of ours hung.
 */
export function attemptBoundMs(episode: Episode, marginS = 5 * 60): number {
  const startupS = episode.sandbox.startup_timeout_s;
  const evalS = episode.eval?.timeout_s ?? 0;
  return (
    (episode.limits.episode_deadline_s + episode.limits.step_timeout_s + 2 * startupS + 2 * evalS + marginS) * 1000
  );
}

/** Why an attempt stopped: an abort's reason wins over the error it caused downstream. */
function reasonOf(
  thrown: unknown,
  o: { shutdown: AbortSignal; job: AbortSignal | undefined; watch: AbortSignal; deadline: AbortSignal; boundS: number },
): RolloutError {
  if (o.shutdown.aborted) return new RolloutError('WORKER_SHUTDOWN', 'worker shut down mid-episode', { cause: thrown });
  // The worker cancels a job only when its lock could not be renewed (start-worker.ts).
  if (o.job?.aborted)
    return new RolloutError('JOB_LOCK_LOST', String(o.job.reason ?? 'the job lock was lost'), { cause: thrown });
  if (o.watch.aborted && o.watch.reason instanceof RolloutError) return o.watch.reason;
  if (o.deadline.aborted)
    return new RolloutError('ATTEMPT_DEADLINE', `attempt exceeded its hard bound of ${o.boundS} s`, { cause: thrown });
  return escapedError(coerceError(thrown));
}

/** One copy of an attempt (the primary, or a straggler's backup) as the result lists it. */
function tracedAttempt(deps: ProcessorDeps, attempt: number, t: AttemptTrace): Attempt {
  return {
    attempt,
    worker_id: deps.workerId,
    sandbox_id: t.sandboxId,
    started_at: t.startedAt.toISOString(),
    ended_at: t.endedAt.toISOString(),
    failure: t.failure,
    ...(t.backup ? { backup: true } : {}),
  };
}

function attemptRecord(
  deps: ProcessorDeps,
  attempt: number,
  sandboxId: string | null,
  startedAt: Date,
  failure: Attempt['failure'],
): Attempt {
  return {
    attempt,
    worker_id: deps.workerId,
    sandbox_id: sandboxId,
    started_at: startedAt.toISOString(),
    ended_at: new Date().toISOString(),
    failure,
  };
}

function queueWaitMs(job: Job<EpisodeJobData>, startedAt: Date): number {
  const enqueued = Date.parse(job.data.enqueued_at);
  return Number.isNaN(enqueued) ? 0 : Math.max(0, startedAt.getTime() - enqueued);
}

/**
 * The episode's secret masker, built once per job (docs/policy.md, "Secrets in observations"); undefined when it
 * has no secret-named sandbox variable long enough to mask, so such episodes pay nothing.
 */
function secretMaskerOf(episode: Episode, log: Logger): SecretMasker | undefined {
  const secrets = episodeSecrets(episode.sandbox.env);
  if (secrets.tooShort.length > 0) {
    log.warn(
      { variables: secrets.tooShort, minLength: MIN_MASKED_LENGTH },
      'secret-named sandbox variables shorter than the minimum are not masked',
    );
  }
  return createSecretMasker(secrets.values);
}

/**
 * RF_ARTIFACTS_DIR: the attempt's whole logs and patch as files, masked like the result, and the result pointing at
 * them. A write that fails (disk full, permissions) is logged and the result goes without: the files are a copy.
 */
async function withArtifacts(
  deps: ProcessorDeps,
  result: EpisodeResult,
  o: { outcome: AttemptOutcome; masker: SecretMasker | undefined; attempt: number; log: Logger },
): Promise<EpisodeResult> {
  const root = deps.artifactsDir;
  const whole = o.outcome.whole;
  if (root === undefined || whole === undefined) return result;
  const mask = (text: string | undefined): string | undefined =>
    text === undefined || o.masker === undefined ? text : o.masker.mask(text);
  try {
    const artifacts = await writeArtifacts({
      root,
      runId: result.run_id,
      episodeId: result.episode_id,
      sampleIndex: result.sample_index,
      attempt: o.attempt,
      evalLog: mask(whole.evalLog),
      patch: result.patch,
      evalScript: result.grading?.eval_script,
      steps: whole.steps,
    });
    return { ...result, artifacts };
  } catch (err) {
    o.log.warn({ err, root }, 'could not write the artifacts (RF_ARTIFACTS_DIR); the result goes without them');
    return result;
  }
}

/**
 * The result as stored, read by everyone downstream (CLI, API streams, pages): every string masked — the step
 * observations are masked already, this catches the rest (commands, the model's messages, the eval log, failure
 * texts) and the patch. The patch was graded before this, as the sandbox produced it; only the stored copy is masked.
 */
function buildResult(
  deps: ProcessorDeps,
  job: Job<EpisodeJobData>,
  o: {
    episode: Episode;
    outcome: AttemptOutcome;
    attempts: Attempt[];
    startedAt: Date;
    masker: SecretMasker | undefined;
  },
): EpisodeResult {
  const result = unmaskedResult(deps, job, o);
  return o.masker ? o.masker.maskDeep(result) : result;
}

function unmaskedResult(
  deps: ProcessorDeps,
  job: Job<EpisodeJobData>,
  {
    episode,
    outcome,
    attempts,
    startedAt,
  }: { episode: Episode; outcome: AttemptOutcome; attempts: Attempt[]; startedAt: Date },
): EpisodeResult {
  const t = outcome.timings;
  return {
    run_id: episode.run_id,
    episode_id: episode.episode_id,
    instance_id: episode.instance_id,
    sample_index: episode.sample_index,
    status: 'completed',
    resolved: outcome.resolved,
    reward: outcome.reward,
    steps: outcome.steps,
    patch: outcome.patch,
    report: outcome.report,
    ...(outcome.grading === undefined ? {} : { grading: outcome.grading }),
    integrity: integrityVerdictOf(outcome.grading?.integrity?.findings ?? []),
    timings: {
      queue_wait_ms: queueWaitMs(job, startedAt),
      sandbox_acquire_ms: t.sandboxAcquireMs,
      replay_ms: t.replayMs,
      grade_ms: t.gradeMs,
      total_ms: Date.now() - startedAt.getTime(),
    },
    attempts,
    // Set on a completed result only for a model-caused problem it was graded with (class `model`).
    failure: outcome.failure,
    worker_id: deps.workerId,
    sandbox_id: outcome.sandboxId,
    finished_at: new Date().toISOString(),
    metadata: episode.metadata,
    ...(outcome.policy
      ? {
          exit_status: outcome.policy.exitStatus,
          turns: outcome.policy.turns,
          tokens: outcome.policy.tokens,
          messages: outcome.policy.messages,
          policy: outcome.policy.info,
        }
      : {}),
    ...(outcome.fidelity === undefined ? {} : { fidelity: outcome.fidelity }),
  };
}

/**
 * Commits the job's failed result. A commit that throws (Redis gone) is logged, not rethrown: the job then
 * fails with the original error, and the worker's failed-job settlement writes the result from that.
 */
async function commitFailure(
  deps: ProcessorDeps,
  job: EpisodeJob,
  ref: EpisodeRef,
  o: {
    err: RolloutError;
    attempts: Attempt[];
    startedAt: Date;
    sandboxId: string | null;
    masker?: SecretMasker | undefined;
  },
  fence: CommitFence,
): Promise<void> {
  const unmasked = {
    ...buildFailedResult({
      episode: job.data.episode,
      failure: toFailure(o.err),
      attempts: o.attempts,
      workerId: deps.workerId,
      sandboxId: o.sandboxId,
      startedAt: o.startedAt,
      queueWaitMs: queueWaitMs(job, o.startedAt),
    }),
    run_id: ref.runId,
    episode_id: ref.episodeId,
    sample_index: ref.sampleIndex,
  };
  const result = o.masker ? o.masker.maskDeep(unmasked) : unmasked;
  try {
    const committed = await deps.results.commit(result, fence);
    if (committed.stored) countFinished(deps.metrics, result);
  } catch (err) {
    deps.logger.error({ err, jobId: job.id }, 'could not commit the failed result; the failed-job settlement will');
  }
}

/** The job's (run, episode, sample), from its id (also when the payload is unreadable). */
function refOf(job: EpisodeJob): EpisodeRef | undefined {
  const parsed = job.id ? parseJobId(job.id) : undefined;
  return parsed ? { runId: parsed.runId, episodeId: parsed.episodeId, sampleIndex: parsed.sampleIndex } : undefined;
}

function pointer(deps: ProcessorDeps, episode: Episode, result: EpisodeResult, stored = false): EpisodeJobReturn {
  return {
    result_key: deps.keys.result(episode.run_id, episode.episode_id, episode.sample_index),
    status: result.status,
    resolved: result.resolved,
    reward: result.reward,
    stored,
  };
}
