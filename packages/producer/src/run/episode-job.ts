/** The queue job of one episode sample, as a submit enqueues it and a force or retry replaces it. */
import {
  jobIdFor,
  jobNameFor,
  type Attempt,
  type Episode,
  type EpisodeJobData,
  type jobOptionsFor,
} from '@rollout-fleet/shared';

export interface EpisodeJob {
  name: string;
  data: EpisodeJobData;
  opts: ReturnType<typeof jobOptionsFor> & { jobId: string };
}

/**
 * Id and name from (run, episode, sample), so the same sample is always the same job; the payload carries the
 * run id and, for a re-run, the attempt history so far.
 */
export function episodeJob(
  runId: string,
  episode: Episode,
  o: { jobOptions: ReturnType<typeof jobOptionsFor>; enqueuedAt: Date; attempts?: Attempt[] },
): EpisodeJob {
  const data: EpisodeJobData = {
    episode: { ...episode, run_id: runId },
    enqueued_at: o.enqueuedAt.toISOString(),
    ...(o.attempts === undefined ? {} : { attempts: o.attempts }),
  };
  const jobId = jobIdFor(runId, episode.episode_id, episode.sample_index);
  return { name: jobNameFor(episode.instance_id, episode.sample_index), data, opts: { ...o.jobOptions, jobId } };
}
