/**
 * Run administration: `status`, `cancel`, `retry --failed`. Each reads or changes one run in Redis.
 */
import type { Command } from 'commander';
import type { RunStatus } from '@rollout-fleet/shared';
import { EXIT } from '../exit-codes.js';
import type { QueueContext } from '../runtime/redis.js';

async function withQueue(command: string, fn: (q: QueueContext) => Promise<number>): Promise<number> {
  // Loaded here, not at the top: `--help` must not pay for loading the packages.
  const { loadContext, reportFailure } = await import('../runtime/context.js');
  const { openQueue } = await import('../runtime/redis.js');
  try {
    const { config } = loadContext();
    const q = await openQueue(config);
    try {
      return await fn(q);
    } finally {
      await q.close();
    }
  } catch (err) {
    return reportFailure(command, err);
  }
}

export function formatStatus(s: RunStatus): string {
  const rate = s.resolvedRate === null ? '-' : `${(s.resolvedRate * 100).toFixed(1)}%`;
  const throughput = s.throughputPerS === null ? '-' : `${(s.throughputPerS * 60).toFixed(1)}/min`;
  const eta =
    s.etaS === null
      ? '-'
      : s.etaS === 0
        ? 'done'
        : `${Math.floor(s.etaS / 60)}m${String(s.etaS % 60).padStart(2, '0')}s`;
  return [
    `run ${s.runId}${s.cancelled ? ' (cancelled)' : ''}: ${s.done}/${s.total} done`,
    ...formatSubmitState(s),
    `  waiting ${s.waiting}  active ${s.active}${s.cancelled && s.active > 0 ? ' (stopping)' : ''}  retrying ${s.retrying}  completed ${s.completed}  failed ${s.failed}`,
    `  resolved ${s.resolved} (${rate})  throughput ${throughput}  eta ${eta}${s.duplicates > 0 ? `  duplicates dropped ${s.duplicates}` : ''}`,
    `  groups ${s.groupsCompleted}/${s.groups} complete (a group = every sample of one episode)`,
    ...formatFidelity(s),
  ].join('\n');
}

const count = (n: number): string => n.toLocaleString('en-US');

/** A run whose jobs are not all in the queue: a submit is at work, or was interrupted and must be run again. */
function formatSubmitState(s: RunStatus): string[] {
  if (s.notEnqueued === 0) return [];
  const enqueued = `enqueued ${count(s.total - s.notEnqueued)} of ${count(s.total)}`;
  if (s.submitting) return [`  ${enqueued} — a submit is enqueueing the rest`];
  if (s.cancelled)
    return [
      `  ${enqueued} — the submit was interrupted, then the run cancelled; ${count(s.notEnqueued)} never enqueued`,
    ];
  return [
    `  ${enqueued} — the submit was interrupted: submit the same files again to resume (only what is missing is enqueued)`,
  ];
}

/** Replay fidelity, when the run replayed recorded observations: clean share, matched steps, first divergences. */
function formatFidelity(s: RunStatus): string[] {
  const f = s.fidelity;
  if (f.replayed === 0) return [];
  const share = f.cleanShare === null ? '-' : `${(f.cleanShare * 100).toFixed(1)}%`;
  const steps = f.stepRatio === null ? '-' : `${(f.stepRatio * 100).toFixed(1)}%`;
  const divergences = Object.entries(f.firstDivergence).filter(([bucket, count]) => bucket !== 'none' && count > 0);
  return [
    `  fidelity ${f.clean}/${f.replayed} replayed without divergence (${share})  steps matched ${f.stepsMatched}/${f.stepsCompared} (${steps})`,
    ...(divergences.length > 0
      ? [`  first divergence at step ${divergences.map(([bucket, count]) => `${bucket}: ${count}`).join(', ')}`]
      : []),
  ];
}

export function registerRunAdmin(program: Command): void {
  program
    .command('status')
    .description('Counts per state, resolved rate, throughput and ETA of a run.')
    .requiredOption('--run <id>', 'run id')
    .option('--json', 'print the status as JSON', false)
    .addHelpText('after', '\nExit codes: 0 shown, 3 unknown run, 4 Redis unreachable.')
    .action(async (flags: { run: string; json: boolean }) => {
      process.exitCode = await withQueue('status', async (q) => {
        const { getRunStatus, liveWorkerIds } = await import('@rollout-fleet/shared');
        const { requireRun } = await import('@rollout-fleet/producer');
        await requireRun({ redis: q.redis, keys: q.keys, runId: flags.run });
        const status = await getRunStatus({ redis: q.redis, keys: q.keys, runId: flags.run });
        console.log(flags.json ? JSON.stringify(status) : formatStatus(status));
        const pending = status.total - status.done - status.notEnqueued;
        if (pending > 0 && !status.cancelled && (await liveWorkerIds({ redis: q.redis, keys: q.keys })).length === 0) {
          console.error(
            `status: warning: no worker has reported recently (none alive on this Redis and prefix); ${count(pending)} episode(s) wait for one — start one with \`npx rollout-fleet worker\``,
          );
        }
        return EXIT.OK;
      });
    });

  program
    .command('cancel')
    .description(
      'Stop a run: its queued episodes are taken out and its running ones stop within seconds (sandboxes killed); each ends failed with code CANCELLED. `retry --failed` resumes it.',
    )
    .requiredOption('--run <id>', 'run id')
    .addHelpText('after', '\nExit codes: 0 cancelled, 3 unknown run, 4 Redis unreachable.')
    .action(async (flags: { run: string }) => {
      process.exitCode = await withQueue('cancel', async (q) => {
        const { cancelRun } = await import('@rollout-fleet/producer');
        const summary = await cancelRun({ queue: q.queue, redis: q.redis, keys: q.keys, runId: flags.run });
        console.log(
          `run ${flags.run}: cancelled; ${summary.removed} queued episode(s) taken out, ${summary.active} running will stop within seconds` +
            ` (resume with: rollout-fleet retry --run ${flags.run} --failed)`,
        );
        return EXIT.OK;
      });
    });

  program
    .command('retry')
    .description(
      'Re-run the episodes of a run whose result is failed (their new results replace the old ones); on a cancelled run this resumes it. To re-run completed episodes: submit the file again with --force.',
    )
    .requiredOption('--run <id>', 'run id')
    // Failed episodes are the only ones a retry can mean (completed ones are re-run with `submit --force`),
    // so `retry --run <id>` does that; `--failed` stays for scripts that say it.
    .option('--failed', 'retry the failed episodes (the default, and the only mode)', true)
    .addHelpText('after', '\nExit codes: 0 re-enqueued (or nothing to retry), 3 unknown run, 4 Redis unreachable.')
    .action(async (flags: { run: string }) => {
      process.exitCode = await withQueue('retry', async (q) => {
        const { retryFailed } = await import('@rollout-fleet/producer');
        const summary = await retryFailed({ queue: q.queue, redis: q.redis, keys: q.keys, runId: flags.run });
        const missing = summary.missingPayload
          ? `, ${summary.missingPayload} without a stored payload (submit the file again with --force)`
          : '';
        if (summary.resumed) {
          console.log(
            `run ${flags.run} was cancelled: resuming it; ${summary.retried} failed episode(s) re-enqueued (${summary.cancelled} of them cancelled)${missing}`,
          );
        } else {
          console.log(`run ${flags.run}: ${summary.retried} failed episode(s) re-enqueued${missing}`);
        }
        return EXIT.OK;
      });
    });
}
