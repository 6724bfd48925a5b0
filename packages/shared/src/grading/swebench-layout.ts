/**
 * A run's results as SWE-bench's evaluation log tree (`swebench/harness/run_evaluation.py`, `run_instance`):
 * `logs/run_evaluation/<run_id>/<model_name_or_path with / → __>/<instance_id>/` holding `patch.diff`, `eval.sh`,
 * `test_output.txt`, `report.json` and `run_instance.log`, written under the harness's rules:
 * - an empty prediction (`""`/null) is never run: no directory, counted in `empty_patch_ids`;
 * - a patch that does not apply, an eval past its timeout, an episode that failed (infrastructure, input) and one
 *   that was not graded leave no `report.json`: the harness counts them as errors;
 * - otherwise `report.json` is the grade, in the harness's key order and `json.dumps(indent=4)` text.
 * `run_instance.log` is rollout-fleet's own account in the harness's log format (it says so on its first line);
 * the rest is what the worker recorded. Pure: the caller reads the results and writes the files.
 */
import type { EpisodeResult, GradingReport } from '../contracts/result.js';
import { classifyInfraFailure } from './infra-failure.js';
import { toPythonJson } from './python-json.js';
import { isEmptyPatch, makeRunReport, modelDirName, runReportFileName, type RunReport } from './run-report.js';

/** `swebench/harness/constants`: the log directory and the file names of one instance. */
export const RUN_EVALUATION_LOG_DIR = 'logs/run_evaluation';
export const INSTANCE_FILES = ['report.json', 'test_output.txt', 'patch.diff', 'eval.sh', 'run_instance.log'] as const;
export type InstanceFileName = (typeof INSTANCE_FILES)[number];

const APPLY_PATCH_FAIL = '>>>>> Patch Apply Failed';
const TRUNCATION_MARKER_START = '\n[... output truncated: ';

/** The prediction a result stands for: `metadata.model` (SWE-bench predictions, gold), else the policy's model. */
export function modelNameOf(result: EpisodeResult): string {
  return result.metadata['model'] ?? result.policy?.model ?? 'None';
}

export interface InstanceLayout {
  model_name_or_path: string;
  /** `logs/run_evaluation/<run>/<model dir>/<instance>` */
  dir: string;
  /** The files of the instance directory by name; none for an empty prediction. */
  files: Partial<Record<InstanceFileName, string>>;
  /** What the harness would count it as, before reading the tree back. */
  outcome: 'empty_patch' | 'report' | 'error';
}

export interface LayoutOptions {
  /** The whole eval log when the result's copy was cut (the worker's artifact file), if it can be read. */
  fullEvalLog?: (result: EpisodeResult) => string | undefined;
}

function instanceDir(runId: string, model: string, instanceId: string): string {
  return `${RUN_EVALUATION_LOG_DIR}/${runId}/${modelDirName(model)}/${instanceId}`;
}

/** The eval log split at `eval_output_offset` into the apply step's part and the eval script's own output. */
function splitLog(log: string, offset: number | undefined, truncated: boolean): { apply: string; tests: string } {
  if (offset === undefined || offset === 0) return { apply: '', tests: log };
  const bytes = Buffer.from(log, 'utf8');
  // A cut log is head + marker + tail: the offset is exact only while it falls in the head.
  const headBytes = truncated ? bytes.indexOf(TRUNCATION_MARKER_START) : bytes.length;
  if (headBytes >= 0 && offset <= headBytes)
    return { apply: bytes.subarray(0, offset).toString('utf8'), tests: bytes.subarray(offset).toString('utf8') };
  return { apply: '', tests: log };
}

/** The apply step's output as the harness's records: each failed command, then the winning or failing output. */
function applyRecords(apply: string): string[] {
  const records: string[] = [];
  for (const line of apply.replace(/\n$/, '').split('\n')) {
    if (apply === '') break;
    const starts = line.startsWith('Failed to apply patch to container:') || line.startsWith('>>>>> ');
    if (starts || records.length === 0) records.push(line);
    else records[records.length - 1] += `\n${line}`;
  }
  return records;
}

/** report.json as the harness's `get_eval_report` writes it (main branch: `infra_failure` after `resolved`). */
function reportFile(instanceId: string, report: GradingReport, testOutput: string): string {
  const entry: Record<string, unknown> = {
    patch_is_None: report.patch_is_None,
    patch_exists: report.patch_exists,
    patch_successfully_applied: report.patch_successfully_applied,
    resolved: report.resolved,
    infra_failure: false,
  };
  if (!report.patch_is_None && report.patch_exists && !report.patch_successfully_applied) {
    // No parseable test output: the harness flags a likely environment fault from test_output.txt (advisory).
    const found = classifyInfraFailure(testOutput);
    if (found !== undefined) {
      entry['infra_failure'] = found.tier === 'environment';
      entry['infra_failure_reason'] = found.reason;
    }
  }
  if (report.tests_status !== undefined) entry['tests_status'] = report.tests_status;
  return toPythonJson({ [instanceId]: entry });
}

/** `2026-12-01 23:04:05,123`: Python logging's asctime. */
function asctime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())},${pad(d.getUTCMilliseconds(), 3)}`
  );
}

export function instanceLayout(result: EpisodeResult, options: LayoutOptions = {}): InstanceLayout {
  const model = modelNameOf(result);
  const id = result.instance_id;
  const dir = instanceDir(result.run_id, model, id);
  const layout: InstanceLayout = { model_name_or_path: model, dir, files: {}, outcome: 'error' };
  if (result.status === 'completed' && isEmptyPatch(result.patch)) return { ...layout, outcome: 'empty_patch' };

  const attempt = result.attempts.at(-1);
  const started = asctime(attempt?.started_at ?? result.finished_at);
  const ended = asctime(result.finished_at);
  const lines: string[] = [];
  const info = (at: string, message: string): void => {
    lines.push(`${at} - INFO - ${message}`);
  };
  info(
    started,
    `rollout-fleet: this log is written from the episode's result (run ${result.run_id}, episode ${result.episode_id}, ` +
      `sample ${result.sample_index}, worker ${result.worker_id}); the other files are what the worker recorded`,
  );
  info(started, `Sandbox for ${id} started: ${result.sandbox_id ?? '(none)'}`);

  if (result.status === 'failed') {
    const failure = result.failure;
    lines.push(
      `${ended} - ERROR - Error in evaluating model for ${id}: ${failure ? `${failure.code} (${failure.class}): ${failure.message}` : 'unknown'}`,
    );
    return { ...layout, files: { 'run_instance.log': `${lines.join('\n')}\n` } };
  }

  const files: InstanceLayout['files'] = { 'patch.diff': result.patch ?? '' };
  info(started, `Intermediate patch for ${id} written to ${dir}/patch.diff, now applying to container...`);
  const grading = result.grading;
  if (result.report === null || grading === undefined) {
    lines.push(`${ended} - ERROR - Error in evaluating model for ${id}: the episode was not graded (no eval spec)`);
    return { ...layout, files: { ...files, 'run_instance.log': `${lines.join('\n')}\n` } };
  }
  const fullLog = grading.log_truncated ? options.fullEvalLog?.(result) : undefined;
  const { apply, tests } =
    fullLog === undefined
      ? splitLog(grading.log, grading.eval_output_offset, grading.log_truncated)
      : splitLog(fullLog, grading.eval_output_offset, false);
  // One log record per attempt of the apply step, as the harness logs them.
  for (const record of applyRecords(apply)) info(started, record);

  if (!grading.tests_ran && apply.includes(APPLY_PATCH_FAIL)) {
    lines.push(`${ended} - INFO - ${APPLY_PATCH_FAIL}`);
    return { ...layout, files: { ...files, 'run_instance.log': `${lines.join('\n')}\n` } };
  }
  if (grading.eval_script !== undefined) {
    files['eval.sh'] = grading.eval_script;
    info(started, `Eval script for ${id} written to ${dir}/eval.sh; copying to container...`);
  }
  files['test_output.txt'] = tests;
  info(ended, `Test runtime: ${(result.timings.grade_ms / 1000).toFixed(2)} seconds (grading, apply step included)`);
  info(ended, `Test output for ${id} written to ${dir}/test_output.txt`);
  if (grading.timed_out) {
    const seconds = /Timeout error: (\d+) seconds exceeded\./.exec(tests)?.[1] ?? '?';
    lines.push(`${ended} - INFO - Error in evaluation for ${id}: Test timed out after ${seconds} seconds.`);
    return { ...layout, files: { ...files, 'run_instance.log': `${lines.join('\n')}\n` } };
  }
  const report = reportFile(id, result.report, tests);
  files['report.json'] = report;
  info(ended, `Grading answer for ${id}...`);
  info(ended, `Result for ${id}: resolved: ${result.report.resolved ? 'True' : 'False'}`);
  files['run_instance.log'] = `${lines.join('\n')}\n`;
  return { ...layout, files, outcome: 'report' };
}

export interface SwebenchTree {
  /** Relative path → content: every instance file and one run report per model. */
  files: Map<string, string>;
  /** Per model: its run report, and where it is in `files`. */
  reports: Array<{ model_name_or_path: string; path: string; report: RunReport }>;
  /** Results left out, for the person running the export. */
  warnings: string[];
}

export interface TreeInput extends LayoutOptions {
  runId: string;
  results: readonly EpisodeResult[];
  /** The dataset's instance ids as submitted; empty or absent: the instances of the results. */
  dataset?: readonly string[];
}

/**
 * The tree of a whole run. Each model (`model_name_or_path`) gets its own directory and run report, over the
 * whole dataset, as if its predictions had been evaluated as a run of their own. One prediction per instance and
 * model, as the harness keys them: of several results for one (sample_index > 0, a second episode), the lowest
 * sample of the first episode id is kept and the others are named in `warnings`.
 */
export function swebenchTree(input: TreeInput): SwebenchTree {
  const byModel = new Map<string, Map<string, EpisodeResult>>();
  const warnings: string[] = [];
  const ordered = [...input.results].sort(
    (a, b) =>
      a.sample_index - b.sample_index || (a.episode_id < b.episode_id ? -1 : a.episode_id > b.episode_id ? 1 : 0),
  );
  for (const result of ordered) {
    const model = modelNameOf(result);
    const predictions = byModel.get(model) ?? new Map<string, EpisodeResult>();
    byModel.set(model, predictions);
    const kept = predictions.get(result.instance_id);
    if (kept !== undefined) {
      warnings.push(
        `${result.instance_id} (${model}): episode ${result.episode_id} sample ${result.sample_index} left out; ` +
          `SWE-bench keeps one prediction per instance (kept episode ${kept.episode_id} sample ${kept.sample_index})`,
      );
      continue;
    }
    predictions.set(result.instance_id, result);
  }
  const dataset =
    input.dataset !== undefined && input.dataset.length > 0
      ? [...input.dataset]
      : [...new Set(input.results.map((r) => r.instance_id))];

  const files = new Map<string, string>();
  const reports: SwebenchTree['reports'] = [];
  for (const [model, predictions] of [...byModel].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const layouts = new Map<string, InstanceLayout>();
    for (const [instanceId, result] of predictions) {
      const layout = instanceLayout(result, input);
      layouts.set(instanceId, layout);
      for (const [name, content] of Object.entries(layout.files)) files.set(`${layout.dir}/${name}`, content);
    }
    const fileOf = (instanceId: string, name: InstanceFileName): string | undefined =>
      layouts.get(instanceId)?.files[name];
    const report = makeRunReport({
      predictions: new Map(
        [...predictions].map(([id, r]) => [
          id,
          // A failed episode never reached a grade: a prediction that ran and left no report (an error).
          { instance_id: id, model_name_or_path: model, model_patch: r.status === 'failed' ? '(failed)' : r.patch },
        ]),
      ),
      dataset,
      readReport: (p) => fileOf(p.instance_id, 'report.json'),
      readLogs: (p) =>
        (['test_output.txt', 'run_instance.log'] as const)
          .map((name) => fileOf(p.instance_id, name))
          .filter((text): text is string => text !== undefined),
    });
    const path = runReportFileName(model, input.runId);
    files.set(path, `${toPythonJson(report)}\n`);
    reports.push({ model_name_or_path: model, path, report });
  }
  return { files, reports, warnings };
}
