/**
 * `results --format fidelity`: one line per result — how many replayed steps matched their recorded
 * observation and where the first one differed — under a header, then the run's totals. Columns are fixed so
 * rows can be printed as results stream in (`--follow`).
 */
import type { EpisodeResult } from '@rollout-fleet/shared';

const INSTANCE_WIDTH = 40;
const COLUMNS: ReadonlyArray<[string, number]> = [
  ['sample', 6],
  ['status', 9],
  ['steps', 5],
  ['compared', 8],
  ['matched', 7],
  ['differs', 7],
  ['fidelity', 8],
];

function cell(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padStart(width);
}

export function fidelityHeader(): string {
  return `${'instance'.padEnd(INSTANCE_WIDTH)}  ${COLUMNS.map(([name, width]) => cell(name, width)).join('  ')}  first divergence`;
}

export function fidelityRow(result: EpisodeResult): string {
  const f = result.fidelity;
  const instance =
    result.instance_id.length > INSTANCE_WIDTH
      ? `${result.instance_id.slice(0, INSTANCE_WIDTH - 1)}…`
      : result.instance_id.padEnd(INSTANCE_WIDTH);
  const ratio = f?.ratio === null || f?.ratio === undefined ? '-' : `${(f.ratio * 100).toFixed(1)}%`;
  const values = [
    String(result.sample_index),
    result.status,
    String(result.steps.length),
    String(f?.compared ?? '-'),
    String(f?.matched ?? '-'),
    String(f?.differed ?? '-'),
    ratio,
  ];
  let first = '-';
  if (f === undefined)
    first = result.status === 'failed' ? `(failed: ${result.failure?.code ?? 'unknown'})` : '(not a replay)';
  else if (f.first_divergence !== null) {
    const step = result.steps[f.first_divergence];
    const command = (step?.command ?? step?.tool ?? '').split('\n')[0] ?? '';
    first = `step ${f.first_divergence}: ${command.length > 60 ? `${command.slice(0, 59)}…` : command}`;
  }
  return `${instance}  ${values.map((value, i) => cell(value, COLUMNS[i]?.[1] ?? 8)).join('  ')}  ${first}`;
}

export interface FidelityTotals {
  replayed: number;
  clean: number;
  compared: number;
  matched: number;
}

export function addToTotals(totals: FidelityTotals, result: EpisodeResult): void {
  const f = result.fidelity;
  if (f === undefined || f.compared === 0) return;
  totals.replayed += 1;
  if (f.differed === 0) totals.clean += 1;
  totals.compared += f.compared;
  totals.matched += f.matched;
}

export function fidelitySummary(runId: string, totals: FidelityTotals): string {
  if (totals.replayed === 0) return `run ${runId}: no replayed step had a recorded observation to compare`;
  const share = ((totals.clean / totals.replayed) * 100).toFixed(1);
  const steps = ((totals.matched / totals.compared) * 100).toFixed(1);
  return `run ${runId}: ${totals.clean}/${totals.replayed} replayed episodes without divergence (${share}%), ${totals.matched}/${totals.compared} steps matched (${steps}%)`;
}
