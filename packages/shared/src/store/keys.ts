/**
 * Redis key layout shared by producer and workers. Every key carries the same hash tag (the BullMQ
 * prefix, `{rf}` by default) so a run's keys and the queue share one Redis Cluster slot.
 */
export const DEFAULT_PREFIX = '{rf}';
export const DEFAULT_QUEUE = 'episodes';

export interface Keyspace {
  readonly prefix: string;
  /**
   * Hash: total, done, completed, failed, resolved, duplicates, groups_completed, created_at, options, cancelled,
   * not_enqueued (jobs counted in total that a submit has not put in the queue yet: in progress or interrupted).
   */
  run(runId: string): string;
  /** Set of known run ids. */
  runs(): string;
  /** String with TTL: a submit of the run is enqueueing right now (refreshed per chunk; gone when it ends or dies). */
  submitting(runId: string): string;
  /** Set of the run's job ids (for status, cancel and retry without scanning the queue). */
  runJobs(runId: string): string;
  /**
   * Set (TTL: result retention): the instance ids of the SWE-bench dataset files the run was submitted with, which
   * its SWE-bench run report counts over (`total_instances`, `incomplete_ids`).
   */
  runDataset(runId: string): string;
  /** String: the one EpisodeResult JSON of (run, episode, sample). */
  result(runId: string, episodeId: string, sampleIndex: number): string;
  /** Stream: one entry per current result, in completion order (for `results --follow`). */
  results(runId: string): string;
  /** Hash: episode id → how many samples its group has (counted as job ids are registered at submit). */
  groupSizes(runId: string): string;
  /** Hash: the samples of one group that have a result (`s<sample>` → 1) and, once complete, `emitted` → stream id. */
  group(runId: string, episodeId: string): string;
  /** Stream: one entry per completed group, in completion order (for the groups stream). */
  groups(runId: string): string;
  /** Hash: the run's fidelity aggregate (counters and the last folded stream id); see run-fidelity.ts. */
  runFidelity(runId: string): string;
  /** Hash: episode label → its latest result's fidelity bucket and step counts. */
  runFidelityEpisodes(runId: string): string;
  /** Hash: label `run|episode|sample` → "<stream id> <status> <resolved> <attemptsMade>" of the current result. */
  resultIndex(runId: string): string;
  /** Hash: label → generation (bumped by every retract: force, retry, a dashboard re-run). */
  generations(runId: string): string;
  /** Hash: label → job data of jobs a cancel removed from the queue (so `retry --failed` can resume them). */
  parked(runId: string): string;
  /**
   * Hash: label `run|episode|sample` → the job (JSON name, data, opts) of an episode forced or retried whose
   * re-run has not begun yet; written with the retract, cleared when an execution begins or a result is stored.
   */
  reruns(): string;
  /** String with TTL: one pass at a time of the pending re-run sweep. */
  rerunLock(): string;
  /**
   * Hash: label → the job instance (its BullMQ creation timestamp) whose execution of the episode began last
   * (ResultStore.begin). A failed job settled after the fact is refused once another job instance has begun.
   */
  began(runId: string): string;
  /** Hash with TTL: the lease of one sandbox slot (ticket); the slot lives exactly as long as this key. */
  lease(ticket: string): string;
  /** Sorted set: live slot tickets by lease expiry (Redis server ms); its size is the fleet's live sandboxes. */
  leases(): string;
  /** Base for the per-ticket keys the slot script builds itself (`<base>lease:<ticket>`, `<base>pool-ready:<spec>`). */
  slotBase(): string;
  /** Sorted set: tickets still creating or starting, by lease expiry. */
  starting(): string;
  /**
   * Sorted set: the fleet's clean sandbox losses (lost before any model command ran), member = episode label,
   * score = Redis server ms of its latest one (docs/adversarial-grading.md, "Never 0 for infra").
   */
  sandboxLosses(): string;
  /** Hash: ticket → "target<TAB>sandbox<TAB>spec", kept past the lease key so the reaper knows what to kill. */
  leaseTails(): string;
  /** Set: "target<TAB>sandbox" whose lease expired, for the reaper to kill. */
  doomed(): string;
  /** Sorted set: acquirers waiting for a slot, by expiry (the warm pool yields to them). */
  slotWaiters(): string;
  /** Hash: warm-pool ticket → "spec<TAB>warming|ready". */
  pool(): string;
  /** Hash: sandbox id → when the reaper first saw it without an owner (Redis server ms). */
  orphans(): string;
  /** String: this deployment's random fleet id, created once; every sandbox carries it as its fleet label. */
  fleetId(): string;
  /** Hash: the adaptive create-rate state (GCRA + AIMD) of one sandbox target. */
  createRate(targetId: string): string;
  /** Keys of one sandbox target's health: recent failures, drained flag (TTL), drains in a row. */
  targetHealth(targetId: string): { failures: string; drained: string; drains: string };
  /** String with TTL: fleet-wide reaper lock. */
  reaperLock(): string;
  /** String with TTL: one pass at a time of the failed-job reconciler. */
  reconcileLock(): string;
  /** Hash: per-worker metrics snapshots (see worker metrics). */
  metrics(): string;
  /** Sorted set with PEXPIRE: the inflight slots of one policy endpoint (holder token → expiry ms). */
  policyInflight(endpointId: string): string;
  /** Hash: job id → worker id, the run's episodes running right now (status reads its size). */
  runActive(runId: string): string;
  /** Set: the run's job ids waiting for a retry after an infra failure. */
  runRetrying(runId: string): string;
  /** Hash: job id → "worker<TAB>run", every running episode of the fleet (swept when a worker dies). */
  activeJobs(): string;
  /** String with TTL: a worker process is alive while this exists. */
  workerAlive(workerId: string): string;
  /** String (TTL): the sandbox spec + tools a spec key stands for (JSON), so a warm pool can create it. */
  spec(specKey: string): string;
  /** Hash (TTL): job id → spec key of a run's enqueued jobs (the warm pool's lookahead over waiting jobs). */
  runSpecs(runId: string): string;
  /** Hash (TTL): spec key → count of sandboxes a run announced it will need next (not enqueued yet). */
  announced(runId: string): string;
  /** Set: runs with an announcement. */
  announcedRuns(): string;
  /** List (TTL): wall times (ms) of the run's latest completed attempts, newest first (straggler p90). */
  runDurations(runId: string): string;
}

export function createKeyspace(prefix: string = DEFAULT_PREFIX): Keyspace {
  const base = `rf:${prefix}`;
  return {
    prefix,
    run: (runId) => `${base}:run:${runId}`,
    runs: () => `${base}:runs`,
    runJobs: (runId) => `${base}:run-jobs:${runId}`,
    runDataset: (runId) => `${base}:run-dataset:${runId}`,
    result: (runId, episodeId, sampleIndex) => `${base}:result:${runId}|${episodeId}|${sampleIndex}`,
    results: (runId) => `${base}:results:${runId}`,
    groupSizes: (runId) => `${base}:group-sizes:${runId}`,
    group: (runId, episodeId) => `${base}:group:${runId}|${episodeId}`,
    groups: (runId) => `${base}:groups:${runId}`,
    runFidelity: (runId) => `${base}:run-fidelity:${runId}`,
    runFidelityEpisodes: (runId) => `${base}:run-fidelity-episodes:${runId}`,
    resultIndex: (runId) => `${base}:result-index:${runId}`,
    generations: (runId) => `${base}:generations:${runId}`,
    parked: (runId) => `${base}:parked:${runId}`,
    reruns: () => `${base}:reruns`,
    rerunLock: () => `${base}:rerun-lock`,
    began: (runId) => `${base}:began:${runId}`,
    lease: (ticket) => `${base}:lease:${ticket}`,
    leases: () => `${base}:leases`,
    sandboxLosses: () => `${base}:sandbox-losses`,
    slotBase: () => `${base}:`,
    starting: () => `${base}:starting`,
    leaseTails: () => `${base}:lease-tails`,
    doomed: () => `${base}:doomed`,
    slotWaiters: () => `${base}:slot-waiters`,
    pool: () => `${base}:pool`,
    orphans: () => `${base}:orphans`,
    fleetId: () => `${base}:fleet-id`,
    createRate: (targetId) => `${base}:create-rate:${targetId}`,
    targetHealth: (targetId) => ({
      failures: `${base}:target-failures:${targetId}`,
      drained: `${base}:target-drained:${targetId}`,
      drains: `${base}:target-drains:${targetId}`,
    }),
    reaperLock: () => `${base}:reaper-lock`,
    reconcileLock: () => `${base}:reconcile-lock`,
    metrics: () => `${base}:metrics`,
    policyInflight: (endpointId) => `${base}:policy-inflight:${endpointId}`,
    runActive: (runId) => `${base}:run-active:${runId}`,
    runRetrying: (runId) => `${base}:run-retrying:${runId}`,
    activeJobs: () => `${base}:active-jobs`,
    workerAlive: (workerId) => `${base}:worker-alive:${workerId}`,
    spec: (key) => `${base}:spec:${key}`,
    runSpecs: (runId) => `${base}:run-specs:${runId}`,
    announced: (runId) => `${base}:announced:${runId}`,
    announcedRuns: () => `${base}:announced-runs`,
    submitting: (runId) => `${base}:submitting:${runId}`,
    runDurations: (runId) => `${base}:run-durations:${runId}`,
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
