/**
 * A real BullMQ worker with a stand-in processor for force/retry tests (test-only; not exported by the package).
 * It keeps the episode processor's contract with the result store (packages/worker/src/processor.ts): an
 * execution begins (ResultStore.begin), returns a result that is already there, commits in the generation it
 * began in and hands the job back when that commit is stale; and, like every worker, it puts back a job it
 * finished while its episode has a pending re-run (requeueWhenFinished). Hooks before and after the commit let
 * a test hold an execution where the interleaving matters.
 */
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { rewardedResult } from './result-fixture.js';
import {
  ResultStore,
  parseJobId,
  requeueWhenFinished,
  type EpisodeJobData,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';

/** One execution of a job, as the hooks see it. */
export interface Execution {
  label: string;
  /** 1 for the first execution of any job of this worker, counting up. */
  serial: number;
  generation: number;
}

export interface StandInHooks {
  beforeCommit?: (e: Execution) => Promise<void>;
  afterCommit?: (e: Execution) => Promise<void>;
}

export interface StandInWorker {
  worker: Worker<EpisodeJobData>;
  /** Executions that began, per label. */
  executions: Map<string, number>;
  /** Labels seen running twice at once (must stay empty). */
  overlaps: string[];
  requeueErrors: unknown[];
  close(): Promise<void>;
}

export function startStandInWorker(o: {
  redisUrl: string;
  prefix: string;
  redis: RedisClient;
  keys: Keyspace;
  hooks?: StandInHooks;
  concurrency?: number;
}): StandInWorker {
  const store = new ResultStore(o.redis, o.keys);
  const executions = new Map<string, number>();
  const running = new Set<string>();
  const overlaps: string[] = [];
  const requeueErrors: unknown[] = [];
  let serial = 0;
  const processor = async (job: Job<EpisodeJobData>, token?: string): Promise<string> => {
    const label = job.id ?? '';
    const ref = parseJobId(label);
    if (!ref) throw new Error(`unexpected job id ${label}`);
    if (running.has(label)) overlaps.push(label);
    running.add(label);
    try {
      // As the real processor: the job instance (its creation timestamp) begins the execution.
      const { generation, current } = await store.begin(ref, String(job.timestamp));
      executions.set(label, (executions.get(label) ?? 0) + 1);
      if (current) return 'done';
      serial += 1;
      const execution: Execution = { label, serial, generation };
      await o.hooks?.beforeCommit?.(execution);
      const result = rewardedResult(
        {
          run_id: ref.runId,
          episode_id: ref.episodeId,
          instance_id: ref.episodeId,
          sample_index: ref.sampleIndex,
          worker_id: `exec-${execution.serial}`,
          finished_at: new Date().toISOString(),
        },
        1,
      );
      const committed = await store.commit(result, { generation, attemptsMade: job.attemptsMade });
      if (committed.reason === 'stale') {
        if (!token) throw new Error('no token to hand the job back with');
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      await o.hooks?.afterCommit?.(execution);
      return committed.reason;
    } finally {
      running.delete(label);
    }
  };
  const worker = new Worker<EpisodeJobData>('episodes', processor, {
    connection: { url: o.redisUrl },
    prefix: o.prefix,
    concurrency: o.concurrency ?? 4,
  });
  const queue = new Queue<EpisodeJobData>('episodes', { connection: { url: o.redisUrl }, prefix: o.prefix });
  requeueWhenFinished(worker, { queue, redis: o.redis, keys: o.keys }, (_jobId, err) => requeueErrors.push(err));
  return {
    worker,
    executions,
    overlaps,
    requeueErrors,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}
