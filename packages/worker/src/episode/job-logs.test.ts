/** Batched job-log rows on a real BullMQ queue: read back as BullMQ's own logs, trimmed to keepLogs. */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedis, deleteKeysMatching, type RedisClient } from '@rollout-fleet/shared';
import { createJobLogWriter } from './job-logs.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `{rf-test-${randomUUID()}}`;
let redis: RedisClient;
let queue: Queue;

beforeAll(() => {
  redis = createRedis(REDIS_URL);
  queue = new Queue('episodes', { connection: redis, prefix });
});
afterAll(async () => {
  await queue.close();
  await deleteKeysMatching(redis, `${prefix}:*`);
  redis.disconnect();
});

describe('job-log appends', () => {
  const append = (...args: Parameters<ReturnType<typeof createJobLogWriter>>): Promise<number> =>
    createJobLogWriter(redis)(...args);
  it('appends rows in order in one write, where Bull Board reads them, honouring keepLogs', async () => {
    const job = await queue.add('a', {}, { jobId: 'j1' });
    expect(await append(job, ['step 1/3', 'step 2/3'])).toBe(2);
    expect(await append(job, ['step 3/3'])).toBe(3);
    expect(await queue.getJobLogs('j1')).toEqual({ logs: ['step 1/3', 'step 2/3', 'step 3/3'], count: 3 });

    const kept = await queue.add('b', {}, { jobId: 'j2', keepLogs: 2 });
    await append(kept, ['1', '2', '3']);
    expect((await queue.getJobLogs('j2')).logs).toEqual(['2', '3']);
  });

  it('writes nothing for a job that no longer exists', async () => {
    const job = await queue.add('c', {}, { jobId: 'j3' });
    await job.remove();
    expect(await append(job, ['late'])).toBe(-1);
    expect(await queue.getJobLogs('j3')).toEqual({ logs: [], count: 0 });
  });
});

describe('createJobLogWriter', () => {
  it('sends the appends of one event-loop turn as one pipeline; each answers its own length (-1 for a gone job)', async () => {
    const jobs = await Promise.all(
      ['w1', 'w2', 'w3'].map((id) => queue.add(id, {}, { jobId: id, ...(id === 'w2' ? { keepLogs: 1 } : {}) })),
    );
    const gone = await queue.add('w4', {}, { jobId: 'w4' });
    await gone.remove();
    const append = createJobLogWriter(redis);
    // The first append of the batch meets a server that does not know its script (NOSCRIPT, as after a
    // restart): asked by an unknown SHA, without flushing the shared server's scripts.
    const makePipeline = redis.pipeline.bind(redis);
    const pipelines = vi.spyOn(redis, 'pipeline').mockImplementation(() => {
      const pipeline = makePipeline();
      const evalsha = pipeline.evalsha.bind(pipeline) as (...args: unknown[]) => unknown;
      let first = true;
      (pipeline as unknown as { evalsha: (...args: unknown[]) => unknown }).evalsha = (
        sha: unknown,
        ...rest: unknown[]
      ) => {
        const asked = first ? '0'.repeat(40) : sha;
        first = false;
        return evalsha(asked, ...rest);
      };
      return pipeline;
    });
    const answers = await Promise.all([
      append(jobs[0]!, ['a1', 'a2']),
      append(jobs[1]!, ['b1', 'b2']),
      append(jobs[2]!, ['c1']),
      append(gone, ['late']),
      append(jobs[0]!, []),
    ]);
    expect(pipelines).toHaveBeenCalledTimes(1);
    pipelines.mockRestore();
    expect(answers).toEqual([2, 1, 1, -1, 0]);
    expect((await queue.getJobLogs('w1')).logs).toEqual(['a1', 'a2']);
    expect((await queue.getJobLogs('w2')).logs).toEqual(['b2']);
    expect((await queue.getJobLogs('w3')).logs).toEqual(['c1']);
    expect(await queue.getJobLogs('w4')).toEqual({ logs: [], count: 0 });
    // Later turns: the script is known again, and rows keep their order.
    expect(await append(jobs[0]!, ['a3'])).toBe(3);
    expect((await queue.getJobLogs('w1')).logs).toEqual(['a1', 'a2', 'a3']);
  });
});
