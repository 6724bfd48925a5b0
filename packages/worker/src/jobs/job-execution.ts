/**
 * The job instance an execution of an episode belongs to, for ResultStore.begin and the failed-job settlement
 * (CommitFence.execution): BullMQ's creation timestamp. A force that takes the episode's job out and adds it again
 * changes it; the job id (the episode's label) and a retry of the same job do not.
 */
import type { Job } from 'bullmq';

export function executionOf(job: Pick<Job, 'timestamp'>): string {
  return String(job.timestamp);
}
