/**
 * The run summary SWE-bench writes as `<model>.<run_id>.json` (`swebench/harness/reporting.py`,
 * `make_run_report`, without the Docker-only keys). Pure: the caller gathers one entry per instance.
 */
import { GradingReportSchema } from '../contracts/result.js';

export interface RunSummaryEntry {
  instance_id: string;
  /**
   * Whether the instance belongs to the evaluated dataset. Predictions outside it count only as submitted.
   * @defaultValue true
   */
  in_dataset?: boolean;
  /** Whether a prediction exists; a dataset instance without one is incomplete. @defaultValue true */
  submitted?: boolean;
  /** The prediction's patch; `""`, `null` or absent is an empty patch (never evaluated). */
  model_patch?: string | null;
  /**
   * The instance's report (the entry of report.json, not the file). `undefined`/`null` = no report, an
   * evaluation error; anything that is not a valid report counts as completed **and** error, as the harness
   * does for an empty or unreadable report.json.
   */
  report?: unknown;
  /**
   * The episode never reached a grade (infrastructure that persisted, a missing image, a cancel): an error
   * instance whatever its patch — never an empty patch, which would read as the model's doing. @defaultValue false
   */
  failed?: boolean;
}

export interface RunSummary {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  error_ids: string[];
  schema_version: 2;
}

/** Python's `sorted()` on str compares code points; localeCompare would not. */
function sortedIds(ids: Set<string>): string[] {
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Entries with the same instance_id are merged as sets, like the harness; pass one entry per instance. */
export function summarizeRun(entries: Iterable<RunSummaryEntry>): RunSummary {
  const dataset = new Set<string>();
  const submitted = new Set<string>();
  const completed = new Set<string>();
  const incomplete = new Set<string>();
  const emptyPatch = new Set<string>();
  const resolved = new Set<string>();
  const unresolved = new Set<string>();
  const errors = new Set<string>();

  for (const entry of entries) {
    const id = entry.instance_id;
    const isSubmitted = entry.submitted ?? true;
    if (isSubmitted) submitted.add(id);
    if (!(entry.in_dataset ?? true)) continue;
    dataset.add(id);
    if (!isSubmitted) {
      incomplete.add(id);
      continue;
    }
    if (entry.failed === true) {
      errors.add(id);
      continue;
    }
    if (entry.model_patch === undefined || entry.model_patch === null || entry.model_patch === '') {
      emptyPatch.add(id);
      continue;
    }
    if (entry.report === undefined || entry.report === null) {
      errors.add(id);
      continue;
    }
    completed.add(id);
    const report = GradingReportSchema.safeParse(entry.report);
    if (!report.success) errors.add(id);
    else if (report.data.resolved) resolved.add(id);
    else unresolved.add(id);
  }

  return {
    total_instances: dataset.size,
    submitted_instances: submitted.size,
    completed_instances: completed.size,
    resolved_instances: resolved.size,
    unresolved_instances: unresolved.size,
    empty_patch_instances: emptyPatch.size,
    error_instances: errors.size,
    completed_ids: sortedIds(completed),
    incomplete_ids: sortedIds(incomplete),
    empty_patch_ids: sortedIds(emptyPatch),
    submitted_ids: sortedIds(submitted),
    resolved_ids: sortedIds(resolved),
    unresolved_ids: sortedIds(unresolved),
    error_ids: sortedIds(errors),
    schema_version: 2,
  };
}
