/**
 * Pending re-runs: why a forced or retried episode can never be left with neither a result nor a job.
 *
 * `submit --force` / `retry --failed` retract an episode's result and must make it run again. The job that
 * produced the result may still be finishing — it committed before the retract and completes (or fails)
 * after it — and the producer may die between the retract and the enqueue. No watch of a fixed length closes
 * that: the job may complete at any time after the force returned. So the need to run again is itself stored,
 * in the same Lua script as the retract (retract-result.lua writes `reruns[label]` = the job to enqueue), and
 * it stays until it is met:
 * - an execution of the episode begins (ResultStore.begin clears it in the MULTI that reads its generation):
 *   that execution runs in the generation the force opened, so from then on the job is BullMQ's like any other
 *   (its attempts, stalls and failed-job settlement);
 * - a result is stored (commit-result.lua clears it): the forced generation has its result.
 * While it is pending, whoever sees the episode's job finished or gone puts the job back (requeueRerun): the
 * worker that completed or failed it, on BullMQ's event (at once), and a sweep on every worker, one pass at a
 * time fleet-wide (requeuePendingReruns), for a worker or producer that died in between. Redis decides, not a
 * clock: the job id is the episode's label, so two requeuers cannot make two jobs (BullMQ keeps one job per id,
 * and its remove refuses a job whose lock is held), and a superfluous re-run of an episode that has its result
 * returns that result (the processor's claim) — the exactly-once commit still decides what is stored.
 * A failed job settled after the fact does not commit while a re-run is pending (CommitFence.afterTheFact): it
 * ran before the force, so its failure is not the forced generation's result.
 *
 * Wire contract (Redis, under the queue's hash tag): hash `reruns`, label `run|episode|sample` → PendingRerun
 * JSON; BullMQ getState / removeJob / addStandardJob on the job whose id is the label.
 */
import { randomUUID } from 'node:crypto';
import type { JobsOptions, Queue, Worker } from 'bullmq';
import type { RedisClient } from '../redis/create-redis.js';
import { releaseLock } from '../redis/release-lock.js';
import { parseJobId, type Keyspace } from '../store/keys.js';
import type { EpisodeJobData } from './job-contract.js';

/** The job a force or retry enqueues for an episode, kept until its re-run begins. */
export interface PendingRerun {
  name: string;
  data: EpisodeJobData;
  opts: JobsOptions & { jobId: string };
}

/** `queued`: the job was put back; `live`: it is waiting, delayed or running; `none`: nothing pending. */
export type RequeueOutcome = 'none' | 'live' | 'queued';

const LIVE = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children', 'active']);

export interface RequeueDeps {
  queue: Queue<EpisodeJobData>;
  redis: RedisClient;
  keys: Keyspace;
}

/** Puts the episode's pending re-run in the queue unless its job is waiting, delayed or running. */
export async function requeueRerun(deps: RequeueDeps, label: string): Promise<RequeueOutcome> {
  // The job (possibly large) is read only for an episode whose job is not live.
  if ((await deps.redis.hexists(deps.keys.reruns(), label)) === 0) return 'none';
  const state = await deps.queue.getJobState(label);
  if (LIVE.has(state)) return 'live';
  const raw = await deps.redis.hget(deps.keys.reruns(), label);
  if (raw === null) return 'none';
  // Completed or failed (an execution from before the force that finished after it) or gone (a producer that
  // died between taking the old job out and adding the new one). The remove is refused while a worker holds the
  // job's lock: it started meanwhile and is the re-run. Once removed, the job is always added back — whatever
  // happened since the look above — so a remove never leaves the episode without a job.
  if ((await deps.queue.remove(label)) !== 1) return 'live';
  const job = JSON.parse(raw) as PendingRerun;
  // A duplicate id is a no-op: another requeuer (or the producer) added it first.
  await deps.queue.add(job.name, job.data, { ...job.opts, jobId: label });
  return 'queued';
}

/**
 * Puts a job back the moment this worker finished it — completed or failed — while its episode has a pending
 * re-run: it was forced as it finished. Independent of the failed-job settlement's order (that refuses to commit
 * while a re-run is pending). A worker that dies before its handler runs leaves the job to the sweep.
 */
export function requeueWhenFinished<R>(
  worker: Worker<EpisodeJobData, R>,
  deps: RequeueDeps,
  onError: (jobId: string, err: unknown) => void,
): void {
  const requeue = (jobId: string | undefined): void => {
    if (jobId === undefined) return;
    requeueRerun(deps, jobId).catch((err: unknown) => onError(jobId, err));
  };
  worker.on('completed', (job) => requeue(job.id));
  worker.on('failed', (job) => requeue(job?.id));
}

export interface SweepOptions extends RequeueDeps {
  /** The fleet-wide lock's lifetime, renewed never: a pass that outlives it may overlap the next. @defaultValue 60 s */
  lockTtlMs?: number;
  /** Told about a label whose requeue threw; the pass goes on. */
  onError?: (label: string, err: unknown) => void;
}

const SWEEP_LOCK_TTL_MS = 60 * 1000;

/**
 * One pass over every pending re-run, one pass at a time fleet-wide; returns how many were put back in the
 * queue (-1 when another process holds the lock). The backstop for a requeuer that died: the worker that
 * finished the job before its `completed`/`failed` handler ran, the producer between retract and enqueue.
 */
export async function requeuePendingReruns(o: SweepOptions): Promise<number> {
  const token = randomUUID();
  const locked = await o.redis.set(o.keys.rerunLock(), token, 'PX', o.lockTtlMs ?? SWEEP_LOCK_TTL_MS, 'NX');
  if (locked !== 'OK') return -1;
  let queued = 0;
  try {
    // The labels only (HSCAN NOVALUES needs Redis 7.4): the jobs are read for the few that are put back.
    for (const label of await o.redis.hkeys(o.keys.reruns())) {
      const ref = parseJobId(label);
      // A run gone by retention has nothing left to run for.
      if (!ref || (await o.redis.exists(o.keys.run(ref.runId))) === 0) {
        await o.redis.hdel(o.keys.reruns(), label);
        continue;
      }
      try {
        if ((await requeueRerun(o, label)) === 'queued') queued += 1;
      } catch (err) {
        o.onError?.(label, err);
      }
    }
  } finally {
    await releaseLock(o.redis, o.keys.rerunLock(), token);
  }
  return queued;
}
