/**
 * Redis key layout shared by producer and workers. Every key carries the same hash tag (the BullMQ
 * prefix, `{rf}` by default) so a run's keys and the queue share one Redis Cluster slot.
 */
export const DEFAULT_PREFIX = '{rf}';
export const DEFAULT_QUEUE = 'episodes';

export interface Keyspace {
  readonly prefix: string;
  /** Hash: total, done, completed, failed, resolved, duplicates, created_at, options. */
  run(runId: string): string;
  /** Set of known run ids. */
  runs(): string;
  /** Set of the run's job ids (for status, cancel and retry without scanning the queue). */
  runJobs(runId: string): string;
  /** String: the one EpisodeResult JSON of (run, episode, sample). */
  result(runId: string, episodeId: string, sampleIndex: number): string;
  /** Stream: one entry per committed result, in completion order (for `results --follow`). */
  results(runId: string): string;
  /** String with TTL: the lease of one sandbox. */
  lease(sandboxId: string): string;
  /** Sorted set: sandbox id by lease expiry (ms), for the reaper. */
  leases(): string;
  /** String with TTL: fleet-wide reaper lock. */
  reaperLock(): string;
  /** Hash: per-worker metrics snapshots (see worker metrics). */
  metrics(): string;
}

export function createKeyspace(prefix: string = DEFAULT_PREFIX): Keyspace {
  const base = `rf:${prefix}`;
  return {
    prefix,
    run: (runId) => `${base}:run:${runId}`,
    runs: () => `${base}:runs`,
    runJobs: (runId) => `${base}:run-jobs:${runId}`,
    result: (runId, episodeId, sampleIndex) => `${base}:result:${runId}|${episodeId}|${sampleIndex}`,
    results: (runId) => `${base}:results:${runId}`,
    lease: (sandboxId) => `${base}:lease:${sandboxId}`,
    leases: () => `${base}:leases`,
    reaperLock: () => `${base}:reaper-lock`,
    metrics: () => `${base}:metrics`,
  };
}

/**
 * BullMQ job id = f(run, episode, sample). BullMQ forbids ':' in custom ids and our id alphabet has no
 * '|', so '|' separates the parts unambiguously.
 */
export function jobIdFor(runId: string, episodeId: string, sampleIndex: number): string {
  return `${runId}|${episodeId}|${sampleIndex}`;
}

export function parseJobId(jobId: string): { runId: string; episodeId: string; sampleIndex: number } | undefined {
  const parts = jobId.split('|');
  if (parts.length !== 3) return undefined;
  const [runId, episodeId, sample] = parts as [string, string, string];
  const sampleIndex = Number(sample);
  if (!Number.isInteger(sampleIndex) || sampleIndex < 0) return undefined;
  return { runId, episodeId, sampleIndex };
}

/** Job name shown in Bull Board: `instance_id#sample`. */
export function jobNameFor(instanceId: string, sampleIndex: number): string {
  return `${instanceId}#${sampleIndex}`;
}
