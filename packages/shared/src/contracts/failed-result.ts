/**
 * The one shape of a `failed` result (infra that persisted, input, cancel), built the same way by the worker's
 * processor, its failed-job settlement and the producer's cancel: no steps, no patch, no reward — a failure
 * must never read as reward 0.
 */
import type { Episode } from './episode.js';
import type { Attempt, EpisodeResult, Failure } from './result.js';

export interface FailedResultInput {
  /** The job's episode payload; it may be the invalid thing itself, so only what can be read is taken. */
  episode: unknown;
  failure: Failure;
  attempts: Attempt[];
  workerId: string;
  sandboxId?: string | null;
  /** When the failing execution started (timings). @defaultValue now */
  startedAt?: Date;
  queueWaitMs?: number;
  /** Used when the payload carries no episode id (a payload too broken to name itself). */
  fallbackEpisodeId?: string;
}

export function buildFailedResult(input: FailedResultInput): EpisodeResult {
  const raw = (typeof input.episode === 'object' && input.episode !== null ? input.episode : {}) as Partial<Episode>;
  const startedAt = input.startedAt ?? new Date();
  const metadata = typeof raw.metadata === 'object' && raw.metadata !== null ? raw.metadata : {};
  return {
    run_id: String(raw.run_id ?? ''),
    episode_id: String(raw.episode_id ?? input.fallbackEpisodeId ?? ''),
    instance_id: String(raw.instance_id ?? ''),
    sample_index: typeof raw.sample_index === 'number' ? raw.sample_index : 0,
    status: 'failed',
    resolved: null,
    reward: null,
    steps: [],
    patch: null,
    report: null,
    // Nothing was graded, so nothing was found: a failed result is never a trainer's integrity case.
    integrity: { verdict: 'clean', reasons: [] },
    timings: {
      queue_wait_ms: input.queueWaitMs ?? 0,
      sandbox_acquire_ms: 0,
      replay_ms: 0,
      grade_ms: 0,
      total_ms: Math.max(0, Date.now() - startedAt.getTime()),
    },
    attempts: input.attempts,
    failure: input.failure,
    worker_id: input.workerId,
    sandbox_id: input.sandboxId ?? null,
    finished_at: new Date().toISOString(),
    metadata,
  };
}
