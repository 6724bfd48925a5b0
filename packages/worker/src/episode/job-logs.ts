/**
 * Job-log rows written in one round trip and one command (job-logs.lua), with BullMQ's own semantics: rows
 * go to the job's `:logs` list (where Bull Board and `queue.getJobLogs` read them), trimmed to the job's
 * `keepLogs`, and nothing is written for a job that no longer exists.
 */
import type { Job } from 'bullmq';
import type { RedisClient } from '@rollout-fleet/shared';
import { LuaScript } from '../supply/lua-script.js';

const SCRIPT = LuaScript.load(new URL('./job-logs.lua', import.meta.url));

export async function appendJobLogs(redis: RedisClient, job: Pick<Job, 'id' | 'queueQualifiedName' | 'opts'>, rows: readonly string[]): Promise<number> {
  if (rows.length === 0 || job.id === undefined) return 0;
  // BullMQ's key of a job: `<prefix>:<queue>:<id>` (queueQualifiedName is `<prefix>:<queue>`).
  const jobKey = `${job.queueQualifiedName}:${job.id}`;
  const keep = job.opts.keepLogs === undefined ? '' : String(job.opts.keepLogs);
  return Number(await SCRIPT.run(redis, [jobKey, `${jobKey}:logs`], [keep, ...rows]));
}
