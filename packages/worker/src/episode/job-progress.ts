/**
 * How an episode job reads in Bull Board. The worker calls, per replayed step:
 *   await job.updateProgress(stepProgress(i, n));
 *   await job.log(formatStepLog(step, n));
 * Bull Board draws its progress ring from a number or from an object's numeric `progress` field, and shows
 * the object itself as JSON in the job's Progress tab; so one object gives both the ring (percent) and the
 * readable `step i/N` label.
 */
import type { GradingDetails, StepRecord, TurnRecord } from '@rollout-fleet/shared';

export interface EpisodeProgress {
  /** Percent of steps done, 0–100 (Bull Board's progress ring). */
  progress: number;
  /** Steps finished so far (1-based count). */
  step: number;
  total: number;
  /** `step i/N`, what a person reads in the Progress tab. */
  label: string;
}

/** Progress after `done` of `total` steps. A trajectory with no steps reads as done. */
export function stepProgress(done: number, total: number): EpisodeProgress {
  const step = Math.max(0, Math.min(done, total));
  const progress = total > 0 ? Math.round((step / total) * 1000) / 10 : 100;
  return { progress, step, total, label: `step ${step}/${total}` };
}

/** Progress of a policy episode after `done` model turns of at most `maxTurns` (`turn i/N`). */
export function turnProgress(done: number, maxTurns: number): EpisodeProgress {
  const progress = stepProgress(done, maxTurns);
  return { ...progress, label: `turn ${progress.step}/${progress.total}` };
}

/**
 * The job-log lines of one model turn: `turn 3/50 finish=tool_calls tokens=812+41 request=0.84s`, then
 * `retries=N (codes)`, `slot-wait=…`, `format-error=<code>` when they apply; then one line per executed step.
 */
export function formatTurnLog(
  turn: Pick<
    TurnRecord,
    'index' | 'finish_reason' | 'usage' | 'latency_ms' | 'retries' | 'retry_codes' | 'slot_wait_ms' | 'format_error'
  >,
  steps: readonly StepLogFields[],
  maxTurns: number,
): string {
  const parts = [`turn ${turn.index + 1}/${maxTurns}`, `finish=${turn.finish_reason ?? '-'}`];
  if (turn.usage !== null) parts.push(`tokens=${turn.usage.prompt_tokens}+${turn.usage.completion_tokens}`);
  parts.push(`request=${formatSeconds(turn.latency_ms)}`);
  if (turn.retries > 0) parts.push(`retries=${turn.retries} (${turn.retry_codes.join(',')})`);
  if (turn.slot_wait_ms >= 1000) parts.push(`slot-wait=${formatSeconds(turn.slot_wait_ms)}`);
  if (turn.format_error !== undefined) parts.push(`format-error=${turn.format_error.code}`);
  return [parts.join(' '), ...steps.map((step) => `  ${formatStepLog(step)}`)].join('\n');
}

/** The fields of a step record one log line needs. */
export type StepLogFields = Pick<StepRecord, 'index' | 'tool' | 'exit_code' | 'duration_ms' | 'timed_out'> &
  Partial<Pick<StepRecord, 'truncated' | 'error'>>;

/**
 * One job-log line per step: `step 3/12 bash exit=0 1.24s`, then `timeout`, `error=<code>` or
 * `output-truncated` when they apply. `exit=-` when the command never produced an exit code. Without `total`
 * (policy episodes: the number of steps is not known ahead) the line starts `step 3`.
 */
export function formatStepLog(step: StepLogFields, total?: number): string {
  const exit = step.exit_code === null ? '-' : String(step.exit_code);
  const parts = [
    `step ${step.index + 1}${total === undefined ? '' : `/${total}`}`,
    step.tool,
    `exit=${exit}`,
    formatSeconds(step.duration_ms),
  ];
  if (step.timed_out) parts.push('timeout');
  if (step.error !== undefined) parts.push(`error=${step.error.code}`);
  if (step.truncated === true) parts.push('output-truncated');
  return parts.join(' ');
}

const NOT_FOUND_LINES = 5;

/**
 * The job-log lines of a grade: `graded parser=django (episode) tests-parsed=7 FAIL_TO_PASS 1/1 PASS_TO_PASS 6/6
 * resolved`, then `WARNING: <problem>` and one `not found: <id>` line per listed test missing from the log (the
 * first few) — so that zero tests parsed, or ids in the wrong format, show in Bull Board's Logs tab.
 */
export function formatGradingLog(details: GradingDetails, resolved: boolean): string {
  const passed = (list: 'FAIL_TO_PASS' | 'PASS_TO_PASS'): string => {
    const tests = details.tests.filter((test) => test.list === list);
    return `${list} ${tests.filter((test) => test.outcome === 'success').length}/${tests.length}`;
  };
  const head = [
    'graded',
    `parser=${details.parser} (${details.parser_source})`,
    `tests-parsed=${details.tests_parsed}`,
    passed('FAIL_TO_PASS'),
    passed('PASS_TO_PASS'),
    resolved ? 'resolved' : 'unresolved',
  ].join(' ');
  if (details.problem === null) return head;
  const missing = details.tests.filter((test) => test.hint !== undefined);
  const lines = missing
    .slice(0, NOT_FOUND_LINES)
    .map((test) => `  not found: ${test.id}${test.similar ? ` (log has: ${test.similar.join(', ')})` : ''}`);
  if (missing.length > NOT_FOUND_LINES)
    lines.push(`  … and ${missing.length - NOT_FOUND_LINES} more (the result's grading.tests lists them all)`);
  return [head, `WARNING: ${details.problem}`, ...lines].join('\n');
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return s < 10 ? `${s.toFixed(2)}s` : s < 100 ? `${s.toFixed(1)}s` : `${Math.round(s)}s`;
}
