/**
 * The BullMQ job contract between producer and workers: queue naming, payload, return value and the
 * default job options. The producer imports this, never worker code.
 */
import type { Episode } from '../contracts/episode.js';
import type { Attempt } from '../contracts/result.js';

const SECOND_MS = 1000;
const DAY_S = 24 * 60 * 60;

export interface EpisodeJobData {
  episode: Episode;
  /** ISO time the producer enqueued the job (queue wait is measured from it). */
  enqueued_at: string;
  /** Attempts that ended in an infra failure, appended by workers before a retry. */
  attempts?: Attempt[];
}

/** The job's return value points at the one stored result. */
export interface EpisodeJobReturn {
  result_key: string;
  status: 'completed' | 'failed';
  resolved: boolean | null;
  reward: number | null;
  /** false when another execution of the same job had already committed the result. */
  stored: boolean;
}

export interface JobPolicy {
  /** Attempts per episode (infra failures retry). @defaultValue 3 */
  attempts: number;
  /** Base of the exponential back-off between attempts. @defaultValue 5 s */
  backoffMs: number;
  /** Completed/failed BullMQ jobs kept this long (results live in our own keys). @defaultValue 14 days */
  retentionS: number;
}

export const DEFAULT_JOB_POLICY: JobPolicy = { attempts: 3, backoffMs: 5 * SECOND_MS, retentionS: 14 * DAY_S };

export function jobOptionsFor(policy: JobPolicy): {
  attempts: number;
  backoff: { type: 'exponential'; delay: number; jitter: number };
  removeOnComplete: { age: number };
  removeOnFail: { age: number };
} {
  return {
    attempts: policy.attempts,
    // Jitter spreads retries of a burst of failures (e.g. a throttled create storm) apart.
    backoff: { type: 'exponential', delay: policy.backoffMs, jitter: 0.5 },
    removeOnComplete: { age: policy.retentionS },
    removeOnFail: { age: policy.retentionS },
  };
}
