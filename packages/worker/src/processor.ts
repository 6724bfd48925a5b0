/**
 * The BullMQ processor: one job = one (run, episode, sample). Decides, at one boundary, what each
 * failure means for the job: input → UnrecoverableError at once; infra → retried with back-off until
 * attempts run out (every attempt kept in the result); shutdown → handed back without using an attempt.
 * The result is committed exactly once (ResultStore's Lua SET NX), even if BullMQ runs the job twice.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { RedisClient } from '@rollout-fleet/shared';
import type {
  ResultStore} from '@rollout-fleet/shared';
import {
  EpisodeSchema,
  RolloutError,
  childLogger,
  coerceError,
  toFailure,
  type Attempt,
  type Episode,
  type EpisodeJobData,
  type EpisodeJobReturn,
  type EpisodeResult,
  type Keyspace,
  type Logger,
} from '@rollout-fleet/shared';
import type { AttemptDeps, AttemptOutcome } from './episode/run-attempt.js';
import { runWithBackup, type AttemptTrace } from './episode/run-with-backup.js';
import type { StragglerPolicy } from './episode/stragglers.js';
import type { EpisodeOutcome } from './metrics/worker-metrics.js';
import { formatStepLog, formatTurnLog, stepProgress, turnProgress, type EpisodeProgress } from './episode/job-progress.js';
import { ProgressBatcher } from './episode/progress-batcher.js';
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
}

export type EpisodeProcessor = (job: Job<EpisodeJobData, EpisodeJobReturn>, token?: string, signal?: AbortSignal) => Promise<EpisodeJobReturn>;

export function createProcessor(deps: ProcessorDeps): EpisodeProcessor {
  return async (job, token, jobSignal) => {
    const attemptNo = job.attemptsMade + 1;
    const startedAt = new Date();
    const parsed = EpisodeSchema.safeParse(job.data.episode);
    if (!parsed.success) {
      const failure = new RolloutError('INPUT_INVALID', `episode payload invalid: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
      await commitFailure(deps, failureResultOf(deps, job, { startedAt, err: failure, attemptNo, sandboxId: null }));
      throw new UnrecoverableError(failure.message);
    }
    const episode = parsed.data;
    const logger = childLogger(deps.logger, { runId: episode.run_id, episodeId: episode.episode_id, jobId: job.id, attempt: attemptNo });

    // Another execution already wrote the result (a stalled job re-run after the first finished).
    const existing = await deps.results.get(episode.run_id, episode.episode_id, episode.sample_index);
    if (existing) return pointer(deps, episode, existing, false);
    if ((await deps.redis.hget(deps.keys.run(episode.run_id), 'cancelled')) === '1') {
      throw new UnrecoverableError('run cancelled');
    }

    // The clocks start once the sandbox is held: waiting for one (fleet create rate, caps, 429s) is bounded by
    // the supply's acquire timeout instead, and never spends an attempt by itself. The episode deadline is the
    // model's time (no step starts after it; graded); the attempt's hard bound around it is ours (infra).
    const deadlineMs = episode.limits.episode_deadline_s * 1000;
    const boundMs = attemptBoundMs(episode);
    const deadlineControl = new AbortController();
    const deadline = deadlineControl.signal;
    let deadlineTimer: NodeJS.Timeout | undefined;
    const startDeadline = (): { deadline: number; episodeDeadline: number } => {
      deadlineTimer ??= setTimeout(() => deadlineControl.abort(new RolloutError('ATTEMPT_DEADLINE', 'attempt bound')), boundMs);
      return { deadline: Date.now() + boundMs, episodeDeadline: Date.now() + deadlineMs };
    };
    const signal = AbortSignal.any([deadline, deps.shutdown, ...(jobSignal ? [jobSignal] : [])]);
    let sandboxId: string | null = null;
    const started = performance.now();
    const jobId = job.id ?? '';
    await deps.activity?.start(episode.run_id, jobId);
    let retrying = false;
    // Progress and log rows are batched: the step loop never waits for Redis (bench/step-overhead.ts).
    const progress = new ProgressBatcher<EpisodeProgress>(
      { updateProgress: (p) => job.updateProgress(p), log: (row) => job.log(row) },
      { logger, ...(deps.progressIntervalMs === undefined ? {} : { intervalMs: deps.progressIntervalMs }) },
    );
    try {
      const { outcome, traces } = await runWithBackup(deps, {
        episode,
        jobId,
        logger,
        signal,
        deadline: Date.now() + deps.supply.limits.acquireTimeoutMs + boundMs,
        startDeadline,
        onSandbox: (id, backup) => {
          if (!backup) sandboxId = id;
          logger.info({ sandboxId: id, backup }, 'sandbox acquired');
        },
        onStep: async (step, total) => {
          progress.push(stepProgress(step.index + 1, total), formatStepLog(step, total));
        },
        onTurn: async (turn, steps, maxTurns) => {
          progress.push(turnProgress(turn.index + 1, maxTurns), formatTurnLog(turn, steps, maxTurns));
        },
      });
      const attempts: Attempt[] = traces.map((t) => tracedAttempt(deps, attemptNo, t));
      const result = buildResult(deps, job, episode, outcome, [...(job.data.attempts ?? []), ...attempts], startedAt);
      deps.metrics.episodeSeconds.observe({ outcome: outcomeOf(result) }, (performance.now() - started) / 1000);
      const committed = await deps.results.commit(result);
      if (committed.stored) deps.metrics.episodes.inc({ outcome: outcomeOf(result) });
      else deps.metrics.duplicateResults.inc();
      // The run's attempt times feed the straggler policy's p90.
      if (committed.stored) await deps.stragglers?.record(episode.run_id, performance.now() - started).catch(() => undefined);
      logger.info({ resolved: result.resolved, reward: result.reward, stored: committed.stored }, 'episode finished');
      return pointer(deps, episode, result, committed.stored);
    } catch (thrown) {
      const err = reasonOf(thrown, { deadline, shutdown: deps.shutdown, boundS: Math.round(boundMs / 1000) });
      if (err.code === 'WORKER_SHUTDOWN' && token) {
        // Hand the job back without spending an attempt; another worker (or this one, restarted) takes it.
        logger.warn('worker shutting down: episode handed back');
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      // Failed attempts count in the duration histogram too (outcome "failed"), or slow failures stay invisible.
      deps.metrics.episodeSeconds.observe({ outcome: 'failed' }, (performance.now() - started) / 1000);
      const attempt = attemptRecord(deps, attemptNo, sandboxId, startedAt, toFailure(err));
      const attempts = [...(job.data.attempts ?? []), attempt];
      const lastAttempt = err.class === 'input' || attemptNo >= (job.opts.attempts ?? 1);
      logger.warn({ err, lastAttempt }, 'episode attempt failed');
      if (lastAttempt) {
        await commitFailure(deps, { ...failureResultOf(deps, job, { startedAt, err, attemptNo, sandboxId }), attempts });
        if (err.class === 'input') throw new UnrecoverableError(err.message);
        throw err;
      }
      deps.metrics.retries.inc({ code: err.code });
      await job.updateData({ ...job.data, attempts });
      retrying = true;
      throw err;
    } finally {
      clearTimeout(deadlineTimer);
      await progress.close();
      await deps.activity?.finish(episode.run_id, jobId, retrying).catch((err: unknown) => logger.warn({ err }, 'could not update run counters'));
    }
  };
}

/**
 * The hard bound of one attempt, from the moment it holds its sandbox: the model's time (the episode deadline,
 * which only ends the steps) plus what our side may need around it — the step that overruns it, a second
 * sandbox start, two grading rounds, set-up margin. Hitting it is infra (ATTEMPT_DEADLINE): something of ours hung.
 */
export function attemptBoundMs(episode: Episode): number {
  const startupS = episode.sandbox.startup_timeout_s;
  const evalS = episode.eval?.timeout_s ?? 0;
  return (episode.limits.episode_deadline_s + episode.limits.step_timeout_s + 2 * startupS + 2 * evalS + 5 * 60) * 1000;
}

/** Why an attempt stopped: an abort's reason wins over the error it caused downstream. */
function reasonOf(thrown: unknown, o: { deadline: AbortSignal; shutdown: AbortSignal; boundS: number }): RolloutError {
  if (o.shutdown.aborted) return new RolloutError('WORKER_SHUTDOWN', 'worker shut down mid-episode', { cause: thrown });
  if (o.deadline.aborted) return new RolloutError('ATTEMPT_DEADLINE', `attempt exceeded its hard bound of ${o.boundS} s`, { cause: thrown });
  const err = coerceError(thrown);
  // Model-caused trouble is an observation or graded inside the attempt; one that escapes is our bug.
  if (err.class === 'model') return new RolloutError('INTERNAL', `a model-side error escaped the attempt: ${err.message}`, { cause: err });
  return err;
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

function attemptRecord(deps: ProcessorDeps, attempt: number, sandboxId: string | null, startedAt: Date, failure: Attempt['failure']): Attempt {
  return { attempt, worker_id: deps.workerId, sandbox_id: sandboxId, started_at: startedAt.toISOString(), ended_at: new Date().toISOString(), failure };
}

function queueWaitMs(job: Job<EpisodeJobData>, startedAt: Date): number {
  const enqueued = Date.parse(job.data.enqueued_at);
  return Number.isNaN(enqueued) ? 0 : Math.max(0, startedAt.getTime() - enqueued);
}

function buildResult(
  deps: ProcessorDeps,
  job: Job<EpisodeJobData>,
  episode: Episode,
  outcome: AttemptOutcome,
  attempts: Attempt[],
  startedAt: Date,
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

function failureResultOf(
  deps: ProcessorDeps,
  job: Job<EpisodeJobData>,
  o: { startedAt: Date; err: RolloutError; attemptNo: number; sandboxId: string | null },
): EpisodeResult {
  // The payload may be the invalid thing itself: take what can be read from it.
  const raw = job.data.episode as Partial<Episode> | undefined;
  const failure = toFailure(o.err);
  return {
    run_id: String(raw?.run_id ?? ''),
    episode_id: String(raw?.episode_id ?? job.id ?? ''),
    instance_id: String(raw?.instance_id ?? ''),
    sample_index: typeof raw?.sample_index === 'number' ? raw.sample_index : 0,
    status: 'failed',
    resolved: null,
    reward: null,
    steps: [],
    patch: null,
    report: null,
    timings: {
      queue_wait_ms: queueWaitMs(job, o.startedAt),
      sandbox_acquire_ms: 0,
      replay_ms: 0,
      grade_ms: 0,
      total_ms: Date.now() - o.startedAt.getTime(),
    },
    attempts: [attemptRecord(deps, o.attemptNo, o.sandboxId, o.startedAt, failure)],
    failure,
    worker_id: deps.workerId,
    sandbox_id: o.sandboxId,
    finished_at: new Date().toISOString(),
    metadata: raw?.metadata ?? {},
  };
}

async function commitFailure(deps: ProcessorDeps, result: EpisodeResult): Promise<void> {
  // Without a run id there is nothing to key a result on; the failed job itself records the error.
  if (!result.run_id) return;
  const committed = await deps.results.commit(result);
  if (committed.stored) deps.metrics.episodes.inc({ outcome: 'failed' });
}

function pointer(deps: ProcessorDeps, episode: Episode, result: EpisodeResult, stored: boolean): EpisodeJobReturn {
  return {
    result_key: deps.keys.result(episode.run_id, episode.episode_id, episode.sample_index),
    status: result.status,
    resolved: result.resolved,
    reward: result.reward,
    stored,
  };
}

function outcomeOf(result: EpisodeResult): EpisodeOutcome {
  if (result.status === 'failed') return 'failed';
  if (result.resolved === null) return 'ungraded';
  return result.resolved ? 'resolved' : 'unresolved';
}
