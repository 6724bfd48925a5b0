/**
 * Bull Board's BullMQ adapter, showing jobs through the shared redaction (redactJobData): sandbox env values and
 * other secrets never reach the page or Bull Board's JSON API — not in the job's data, return value or
 * progress (Bull Board's formatters), nor in its logs, failure reason or stack trace (scrubbed of the values the
 * job's data holds).
 */
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { Job, Queue } from 'bullmq';
import { jobSecrets, redactJobData, redactJobText } from '@rollout-fleet/shared';

type AdapterOptions = NonNullable<ConstructorParameters<typeof BullMQAdapter>[1]>;

function scrubbed(job: Job): Job {
  const secrets = jobSecrets(job.data);
  if (typeof job.failedReason === 'string') job.failedReason = redactJobText(job.failedReason, secrets);
  if (Array.isArray(job.stacktrace))
    job.stacktrace = job.stacktrace.map((line) => (typeof line === 'string' ? redactJobText(line, secrets) : line));
  return job;
}

export class RedactingBullMQAdapter extends BullMQAdapter {
  constructor(queue: Queue, options?: AdapterOptions) {
    super(queue, options);
    this.setFormatter('data', (data: unknown) => redactJobData(data));
    this.setFormatter('returnValue', (value: unknown) => redactJobData(value));
    this.setFormatter('progress', (value: unknown) => redactJobData(value));
  }

  override async getJob(id: string): Promise<Job | undefined> {
    const job = await super.getJob(id);
    return job === undefined || job === null ? job : scrubbed(job);
  }

  override async getJobs(...args: Parameters<BullMQAdapter['getJobs']>): Promise<Job[]> {
    return (await super.getJobs(...args)).map(scrubbed);
  }

  override async getJobLogs(id: string): Promise<string[]> {
    const [logs, job] = await Promise.all([super.getJobLogs(id), super.getJob(id)]);
    const secrets = jobSecrets(job?.data);
    return logs.map((line) => redactJobText(line, secrets));
  }
}
