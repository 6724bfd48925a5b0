/**
 * Exactly one result for every finished job, also when BullMQ failed it without calling the processor (a job
 * that stalled more often than `maxStalledCount`: "job stalled more than allowable limit") or when the
 * processor's own failure commit threw. Runs on the worker's `failed` event and from the reconciler; writing
 * is the exactly-once commit, so running it twice (or on a job that has its result) stores nothing. A job that
 * failed in the generation before a force (it ran before the retract) is not settled: it runs again instead.
 */
import type { Job } from 'bullmq';
import {
  RolloutError,
  buildFailedResult,
  parseJobId,
  toFailure,
  type EpisodeJobData,
  type Failure,
  type ResultStore,
} from '@rollout-fleet/shared';
import { executionOf } from './job-execution.js';

export type Settlement = 'settled' | 'has-result' | 'not-final' | 'unknown-job';

const STALLED = /stalled more than allowable limit/i;

/** The failure a job ended with, from what BullMQ hands the `failed` event. */
export function failureOfFailedJob(err: Error | undefined, failedReason: string | undefined): Failure {
  if (err instanceof RolloutError) return toFailure(err);
  const message = err?.message ?? failedReason ?? 'the job failed';
  if (STALLED.test(message)) {
    return toFailure(
      new RolloutError('JOB_STALLED', `workers died running this job more often than allowed (${message})`),
    );
  }
  return toFailure(new RolloutError('INTERNAL', `the job failed: ${message}`));
}

export async function settleFailedJob(
  deps: { results: ResultStore; workerId: string },
  job: Job<EpisodeJobData>,
  err?: Error,
): Promise<Settlement> {
  const ref = job.id ? parseJobId(job.id) : undefined;
  if (!ref) return 'unknown-job';
  if ((await job.getState()) !== 'failed') return 'not-final';
  const { generation, current } = await deps.results.state(ref);
  if (current) return 'has-result';
  const failure = failureOfFailedJob(err, job.failedReason);
  const prior = job.data.attempts ?? [];
  const at = (ms: number | undefined): string => new Date(ms ?? Date.now()).toISOString();
  const attempts = [
    ...prior,
    {
      attempt: prior.length + 1,
      worker_id: deps.workerId,
      sandbox_id: null,
      started_at: at(job.processedOn),
      ended_at: at(job.finishedOn),
      failure,
    },
  ];
  const result = {
    ...buildFailedResult({ episode: job.data.episode, failure, attempts, workerId: deps.workerId }),
    run_id: ref.runId,
    episode_id: ref.episodeId,
    sample_index: ref.sampleIndex,
  };
  // The execution that ended the job ran with one attempt fewer than BullMQ counts now. It may have run before a
  // force: while the force's re-run has not begun, the commit is refused (the pending re-run puts the job back);
  // once it has, the commit is refused because another job instance began (execution) — checked in the commit
  // script itself, so a re-run beginning between the reads above and this commit cannot slip through.
  const committed = await deps.results.commit(result, {
    generation,
    attemptsMade: Math.max(0, job.attemptsMade - 1),
    afterTheFact: true,
    execution: executionOf(job),
  });
  return committed.stored ? 'settled' : 'has-result';
}
