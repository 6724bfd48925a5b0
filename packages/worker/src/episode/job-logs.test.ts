/** Batched job-log rows on a real BullMQ queue: read back as BullMQ's own logs, trimmed to keepLogs. */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, deleteKeysMatching, type RedisClient } from '@rollout-fleet/shared';
import { appendJobLogs } from './job-logs.js';

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

describe('appendJobLogs', () => {
  it('appends rows in order in one write, where Bull Board reads them, honouring keepLogs', async () => {
    const job = await queue.add('a', {}, { jobId: 'j1' });
    expect(await appendJobLogs(redis, job, ['step 1/3', 'step 2/3'])).toBe(2);
    expect(await appendJobLogs(redis, job, ['step 3/3'])).toBe(3);
    expect(await queue.getJobLogs('j1')).toEqual({ logs: ['step 1/3', 'step 2/3', 'step 3/3'], count: 3 });

    const kept = await queue.add('b', {}, { jobId: 'j2', keepLogs: 2 });
    await appendJobLogs(redis, kept, ['1', '2', '3']);
    expect((await queue.getJobLogs('j2')).logs).toEqual(['2', '3']);
  });

  it('writes nothing for a job that no longer exists', async () => {
    const job = await queue.add('c', {}, { jobId: 'j3' });
    await job.remove();
    expect(await appendJobLogs(redis, job, ['late'])).toBe(-1);
    expect(await queue.getJobLogs('j3')).toEqual({ logs: [], count: 0 });
  });
});
