import { problemAt, type RecordLocation } from '../validation/problem.js';
import { buildEpisodes, type EpisodeDraft } from './episode-builder.js';
import { describeType, isRecord, keyPath, readJsonRecords, type JsonRecord } from './json-source.js';
import { evalSpecForInstance, type LocatedInstance, type SweBenchInstance } from './swebench-dataset.js';
import { emptyResult, mergeInto, type ImportOptions, type ImportResult, type InputFile } from './types.js';

export interface SweBenchImportOptions extends ImportOptions {
  /** The dataset, by instance id (see parseSweBenchInstances). */
  instances: ReadonlyMap<string, SweBenchInstance>;
  /** Replaces the per-repo default test command. */
  testCommand?: string;
}

/**
 * SWE-bench predictions (trajectories-and-grading.md §3) → grading-only episodes: empty trajectory, the
 * prediction's `model_patch` ("" and null kept: the worker reports them as empty patches, as SWE-bench counts
 * them), and the instance's eval spec. Accepted: `preds.json` dict keyed by instance id, a JSON list, a single
 * prediction object, or JSONL (`all_preds.jsonl`).
 */
export function importSweBenchPredictions(file: InputFile, options: SweBenchImportOptions): ImportResult {
  const result = emptyResult();
  const { records, problems, single } = readJsonRecords(file);
  result.problems.push(...problems);
  const predictions = single ? unpackDict(records[0]) : records;
  for (const { value, location } of predictions) mergeInto(result, importPrediction(value, location, options));
  return result;
}

/** `preds.json` = `{instance_id: prediction}`; a lone object with `instance_id` is one prediction. */
function unpackDict(record: JsonRecord | undefined): JsonRecord[] {
  if (record === undefined) return [];
  const value = record.value;
  if (!isRecord(value) || typeof value['instance_id'] === 'string') return [record];
  return Object.entries(value).map(([key, prediction]) => ({
    value:
      isRecord(prediction) && prediction['instance_id'] === undefined
        ? { ...prediction, instance_id: key }
        : prediction,
    location: { file: record.location.file, path: keyPath(key) },
  }));
}

function importPrediction(value: unknown, location: RecordLocation, options: SweBenchImportOptions): ImportResult {
  const result = emptyResult();
  const fail = (field: string | undefined, message: string, hint: string): ImportResult => {
    result.problems.push(problemAt(location, { ...(field === undefined ? {} : { field }), message, hint }));
    return result;
  };
  if (!isRecord(value))
    return fail(
      undefined,
      `expected a prediction object, got ${describeType(value)}`,
      'give {"instance_id", "model_patch", "model_name_or_path"} objects',
    );
  const instanceId = value['instance_id'];
  if (typeof instanceId !== 'string' || instanceId === '') {
    return fail(
      'instance_id',
      instanceId === undefined
        ? 'missing (expected string)'
        : `expected a non-empty string, got ${describeType(instanceId)}`,
      'add the SWE-bench instance id the prediction is for',
    );
  }
  const patch = value['model_patch'];
  if (patch !== null && typeof patch !== 'string') {
    return fail(
      'model_patch',
      patch === undefined ? 'missing (expected string or null)' : `expected string or null, got ${describeType(patch)}`,
      'give the patch text; "" or null mean an empty prediction',
    );
  }
  const instance = options.instances.get(instanceId);
  if (instance === undefined) {
    return fail(
      'instance_id',
      `instance "${instanceId}" is not in the dataset`,
      options.instances.size === 0
        ? 'pass the SWE-bench dataset file (JSON list or JSONL of instances) together with the predictions'
        : 'pass the dataset file that contains this instance, or remove the prediction',
    );
  }
  const draft = draftFor(instance, options);
  draft.modelPatch = patch;
  if (typeof value['model_name_or_path'] === 'string') draft.metadata['model'] = value['model_name_or_path'];
  return buildEpisodes(draft, location, options);
}

function draftFor(instance: SweBenchInstance, options: SweBenchImportOptions): EpisodeDraft {
  const draft: EpisodeDraft = {
    instanceId: instance.instance_id,
    trajectory: [],
    eval: evalSpecForInstance(instance, options.testCommand === undefined ? {} : { testCommand: options.testCommand }),
    metadata: { source_format: 'swebench-predictions' },
  };
  if (instance.image_name !== undefined) draft.recordImage = instance.image_name;
  return draft;
}

/** SWE-bench's `gold` predictions: every instance graded with its own gold `patch`. */
export function importSweBenchGold(
  instances: readonly LocatedInstance[],
  options: SweBenchImportOptions,
): ImportResult {
  const result = emptyResult();
  for (const { instance, location } of instances) {
    const draft = draftFor(instance, options);
    draft.modelPatch = instance.patch ?? null;
    draft.metadata['model'] = 'gold';
    mergeInto(result, buildEpisodes(draft, location, options));
  }
  return result;
}
