/**
 * The run report SWE-bench writes as `<model_name_or_path>.<run_id>.json` (`swebench/harness/reporting.py`,
 * `make_run_report`, main branch), computed the way the harness computes it: from the predictions, the whole
 * dataset, and which `report.json` files exist in the log tree — so the counts of a tree written by
 * `results --format swebench --out` are the counts the harness would print for it. The Docker-only keys
 * (`unstopped_instances`, `unstopped_containers`, `unremoved_images`) are left out, as the harness does without a
 * Docker client.
 */
import { classifyInfraFailure } from './infra-failure.js';

export interface SwebenchPrediction {
  instance_id: string;
  model_name_or_path: string;
  /** `""` and `null` (or absent) are empty patches: never evaluated, no log directory. */
  model_patch?: string | null;
}

export interface RunReportInput {
  /** By instance id, in the order of the predictions file (a later prediction of an id replaced the earlier). */
  predictions: ReadonlyMap<string, SwebenchPrediction>;
  /** Instance ids of the whole dataset the predictions were evaluated against. */
  dataset: readonly string[];
  /** The text of the instance's `report.json`; undefined when the file does not exist. */
  readReport(prediction: SwebenchPrediction): string | undefined;
  /** The texts of the instance's `test_output.txt` and `run_instance.log`, those that exist (for the triage). */
  readLogs(prediction: SwebenchPrediction): string[];
}

export interface RunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  infra_failure_instances: number;
  ambiguous_failure_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  infra_failure_ids: string[];
  ambiguous_failure_ids: string[];
  failure_reasons: Record<string, string>;
  error_ids: string[];
  schema_version: 2;
}

/** Python's `sorted()` on str compares code points; localeCompare would not. */
function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedIds(ids: Iterable<string>): string[] {
  return [...ids].sort(byCodePoint);
}

/** `model_name_or_path` as a directory name: the harness replaces every `/` with `__`. */
export function modelDirName(modelNameOrPath: string): string {
  return modelNameOrPath.replaceAll('/', '__');
}

export function isEmptyPatch(patch: string | null | undefined): boolean {
  return patch === undefined || patch === null || patch === '';
}

/**
 * `report[instance_id]["resolved"]` of a report.json text: true/false, or undefined where the harness counts an
 * error (empty file, not JSON, no entry for the instance).
 */
function resolvedIn(text: string, instanceId: string): boolean | undefined {
  const content = text.trim();
  if (content === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || !Object.hasOwn(parsed, instanceId)) return undefined;
  const entry = (parsed as Record<string, unknown>)[instanceId];
  if (typeof entry !== 'object' || entry === null || !Object.hasOwn(entry, 'resolved')) return undefined;
  // Python truthiness of the value, as `if report[instance_id]["resolved"]:` reads it.
  const value = (entry as Record<string, unknown>)['resolved'];
  return !(value === false || value === null || value === 0 || value === '' || (Array.isArray(value) && !value.length));
}

export function makeRunReport(input: RunReportInput): RunReport {
  const { predictions } = input;
  const completed = new Set<string>();
  const resolved = new Set<string>();
  const unresolved = new Set<string>();
  const errors = new Set<string>();
  const incomplete = new Set<string>();
  const emptyPatch = new Set<string>();

  for (const instanceId of input.dataset) {
    const prediction = predictions.get(instanceId);
    if (prediction === undefined) {
      incomplete.add(instanceId);
      continue;
    }
    if (isEmptyPatch(prediction.model_patch)) {
      emptyPatch.add(instanceId);
      continue;
    }
    const text = input.readReport(prediction);
    if (text === undefined) {
      errors.add(instanceId);
      continue;
    }
    // The file exists: the instance ran (an unreadable report is completed *and* an error, as in the harness).
    completed.add(instanceId);
    const verdict = resolvedIn(text, instanceId);
    if (verdict === undefined) errors.add(instanceId);
    else if (verdict) resolved.add(instanceId);
    else unresolved.add(instanceId);
  }

  const infra = new Set<string>();
  const ambiguous = new Set<string>();
  const reasons = new Map<string, string>();
  for (const instanceId of new Set([...unresolved, ...errors])) {
    const prediction = predictions.get(instanceId);
    if (prediction === undefined) continue;
    const found = classifyInfraFailure(input.readLogs(prediction).join('\n'));
    if (found === undefined) continue;
    reasons.set(instanceId, found.reason);
    (found.tier === 'environment' ? infra : ambiguous).add(instanceId);
  }

  return {
    total_instances: input.dataset.length,
    submitted_instances: predictions.size,
    completed_instances: completed.size,
    resolved_instances: resolved.size,
    unresolved_instances: unresolved.size,
    infra_failure_instances: infra.size,
    ambiguous_failure_instances: ambiguous.size,
    empty_patch_instances: emptyPatch.size,
    error_instances: errors.size,
    completed_ids: sortedIds(completed),
    incomplete_ids: sortedIds(incomplete),
    empty_patch_ids: sortedIds(emptyPatch),
    submitted_ids: sortedIds(predictions.keys()),
    resolved_ids: sortedIds(resolved),
    unresolved_ids: sortedIds(unresolved),
    infra_failure_ids: sortedIds(infra),
    ambiguous_failure_ids: sortedIds(ambiguous),
    failure_reasons: Object.fromEntries(sortedIds(reasons.keys()).map((id) => [id, reasons.get(id) ?? ''])),
    error_ids: sortedIds(errors),
    schema_version: 2,
  };
}

/** The run report's file name: `<model_name_or_path with / → __>.<run_id>.json`. */
export function runReportFileName(modelNameOrPath: string, runId: string): string {
  return `${modelDirName(modelNameOrPath)}.${runId}.json`;
}
