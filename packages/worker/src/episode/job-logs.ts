/**
 * Job-log rows written in one round trip and one command (job-logs.lua), with BullMQ's own semantics: rows
 * go to the job's `:logs` list (where Bull Board and `queue.getJobLogs` read them), trimmed to the job's
 * `keepLogs`, and nothing is written for a job that no longer exists.
 */
import type { Job } from 'bullmq';
import { LuaScript, isNoScriptError, type RedisClient } from '@rollout-fleet/shared';

const SCRIPT = LuaScript.load(new URL('./job-logs.lua', import.meta.url));

type LoggedJob = Pick<Job, 'id' | 'queueQualifiedName' | 'opts'>;

function scriptArgs(job: LoggedJob, rows: readonly string[]): { keys: string[]; args: string[] } {
  // BullMQ's key of a job: `<prefix>:<queue>:<id>` (queueQualifiedName is `<prefix>:<queue>`).
  const jobKey = `${job.queueQualifiedName}:${job.id}`;
  const keep = job.opts.keepLogs === undefined ? '' : String(job.opts.keepLogs);
  return { keys: [jobKey, `${jobKey}:logs`], args: [keep, ...rows] };
}

/**
 * Appends job-log rows for many episodes at once: the appends asked for during one event-loop turn go to Redis as one
 * pipeline (one socket write) instead of one command each. A thousand running episodes each flush their rows
 * about once a second, on their own timers; one write per command was a visible share of the worker's CPU.
 * Each append still answers on its own (its log length, or -1 for a job that is gone).
 */
export function createJobLogWriter(redis: RedisClient): (job: LoggedJob, rows: readonly string[]) => Promise<number> {
  let pending: Array<{ keys: string[]; args: string[]; resolve: (n: number) => void; reject: (err: unknown) => void }> =
    [];
  const flush = async (): Promise<void> => {
    const batch = pending;
    pending = [];
    const pipeline = redis.pipeline();
    for (const item of batch) pipeline.evalsha(SCRIPT.sha, item.keys.length, ...item.keys, ...item.args);
    const answers = await pipeline.exec().catch((err: unknown) => batch.map((): [unknown, unknown] => [err, null]));
    batch.forEach((item, i) => {
      const [err, value] = answers?.[i] ?? [new Error('no answer from the pipeline'), null];
      if (err === null) item.resolve(Number(value));
      // A server that does not know the script yet (fresh, restarted): this one append loads it.
      else if (isNoScriptError(err))
        SCRIPT.run(redis, item.keys, item.args).then((n) => item.resolve(Number(n)), item.reject);
      else item.reject(err);
    });
  };
  return (job, rows) => {
    if (rows.length === 0 || job.id === undefined) return Promise.resolve(0);
    const { keys, args } = scriptArgs(job, rows);
    return new Promise<number>((resolve, reject) => {
      if (pending.length === 0) setImmediate(() => void flush());
      pending.push({ keys, args, resolve, reject });
    });
  };
}
