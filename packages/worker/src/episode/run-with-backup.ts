/**
 * One attempt at an episode, with a backup when it straggles: while the primary runs, the straggler policy
 * is asked every few seconds; once it says so (and the run's backup budget allows), the same episode starts
 * again in another sandbox (role `backup`, within the fleet's caps). The first of the two to finish becomes
 * the result — the processor commits it, and the exactly-once commit still decides against any other
 * execution — and the other is aborted (ATTEMPT_SUPERSEDED) and its sandbox killed. Both are recorded.
 */
import {
  RolloutError,
  abortableDelay,
  coerceError,
  linkedAbort,
  toFailure,
  type Failure,
  type LinkedAbort,
} from '@rollout-fleet/shared';
import { runAttempt, type AttemptDeps, type AttemptInput, type AttemptOutcome } from './run-attempt.js';
import type { StragglerPolicy } from './stragglers.js';

export interface AttemptTrace {
  backup: boolean;
  sandboxId: string | null;
  startedAt: Date;
  endedAt: Date;
  /** null for the one whose outcome is returned. */
  failure: Failure | null;
}

export interface RacedAttempt {
  outcome: AttemptOutcome;
  /** The primary, and the backup when one ran, in start order. */
  traces: AttemptTrace[];
}

interface Runner {
  backup: boolean;
  control: LinkedAbort;
  sandboxId: string | null;
  startedAt: Date;
  done: Promise<AttemptOutcome>;
  settled: boolean;
}

/** Runs the attempt; `policy` undefined = no backups. Rejects with the primary's error when no copy succeeded. */
export async function runWithBackup(
  deps: AttemptDeps & {
    stragglers?: StragglerPolicy;
    /** Runs one copy of the attempt. @defaultValue runAttempt */
    runAttempt?: (deps: AttemptDeps, input: AttemptInput) => Promise<AttemptOutcome>;
  },
  input: AttemptInput,
): Promise<RacedAttempt> {
  const attempt = deps.runAttempt ?? runAttempt;
  const start = (backup: boolean): Runner => {
    const control = linkedAbort([input.signal]);
    // Progress shows the primary's steps; a backup shows in the logs and in the result's attempts.
    const { onStep, onTurn, ...rest } = input;
    const reporting = backup ? rest : { ...rest, ...(onStep ? { onStep } : {}), ...(onTurn ? { onTurn } : {}) };
    const runner: Runner = {
      backup,
      control,
      sandboxId: null,
      startedAt: new Date(),
      done: Promise.resolve(undefined as never),
      settled: false,
    };
    runner.done = attempt(deps, {
      ...reporting,
      role: backup ? 'backup' : 'main',
      signal: control.signal,
      onSandbox: (id) => {
        runner.sandboxId = id;
        input.onSandbox?.(id, backup);
      },
    });
    const settle = (): void => {
      runner.settled = true;
      control.dispose();
    };
    runner.done.then(settle, settle);
    return runner;
  };
  const trace = (r: Runner, failure: Failure | null): AttemptTrace => ({
    backup: r.backup,
    sandboxId: r.sandboxId,
    startedAt: r.startedAt,
    endedAt: new Date(),
    failure,
  });

  const primary = start(false);
  const policy = deps.stragglers;
  if (!policy) return { outcome: await primary.done, traces: [trace(primary, null)] };

  const watchStop = new AbortController();
  const began = performance.now();
  const watching = (async (): Promise<boolean> => {
    for (;;) {
      await abortableDelay(policy.checkMs, watchStop.signal);
      if (primary.settled || input.signal.aborted) return false;
      if (!(await policy.isStraggler(input.episode.run_id, performance.now() - began))) continue;
      return policy.takeBudget(input.episode.run_id);
    }
  })().catch(() => false);

  const first = await Promise.race([
    primary.done.then(
      () => 'primary' as const,
      () => 'primary' as const,
    ),
    watching.then((b) => (b ? ('backup' as const) : ('none' as const))),
  ]);
  if (first !== 'backup') {
    watchStop.abort();
    return { outcome: await primary.done, traces: [trace(primary, null)] };
  }
  input.logger.warn(
    { elapsedMs: Math.round(performance.now() - began) },
    'attempt is a straggler: starting a backup in another sandbox',
  );
  const backup = start(true);
  const runners = [primary, backup];
  const winner = await firstSuccess(runners);
  if (!winner) {
    // Neither copy produced an outcome: the primary's failure is the attempt's.
    await Promise.allSettled(runners.map((r) => r.done));
    throw await primary.done.then(
      () => new RolloutError('INTERNAL', 'unreachable'),
      (err: unknown) => err,
    );
  }
  const loser = runners.find((r) => r !== winner) as Runner;
  const superseded = new RolloutError(
    'ATTEMPT_SUPERSEDED',
    `the ${winner.backup ? 'backup' : 'primary'} attempt finished first; this one was stopped and its sandbox killed`,
  );
  if (!loser.settled) loser.control.abort(superseded);
  // Its finally has released (killed) its sandbox once this settles.
  const loserError = await loser.done.then(
    () => superseded,
    (err: unknown) => err,
  );
  const loserFailure = loser.control.signal.aborted ? toFailure(superseded) : toFailure(coerceError(loserError));
  const traces = [trace(winner, null), trace(loser, loserFailure)].sort(
    (a, b) => a.startedAt.getTime() - b.startedAt.getTime(),
  );
  return { outcome: await winner.done, traces };
}

/** The first runner to succeed; undefined when all fail. */
async function firstSuccess(runners: Runner[]): Promise<Runner | undefined> {
  return new Promise((resolve) => {
    let failed = 0;
    for (const r of runners) {
      r.done.then(
        () => resolve(r),
        () => {
          failed += 1;
          if (failed === runners.length) resolve(undefined);
        },
      );
    }
  });
}
