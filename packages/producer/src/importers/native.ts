import { formatLocation, problemAt, type RecordLocation } from '../validation/problem.js';
import { episodeIdFor, finishEpisode, sandboxFor } from './episode-builder.js';
import {
  describeType,
  fileExtension,
  indexPath,
  isRecord,
  jsonSyntaxProblem,
  parseJsonLines,
  parseJsonText,
} from './json-source.js';
import { emptyResult, mergeInto, type ImportOptions, type ImportResult, type InputFile } from './types.js';

/**
 * Native episodes: JSONL (one Episode per line) or JSON (one Episode or an array), in the wire shape of
 * EpisodeSchema. run_id is always options.runId (the --run of the submission); filled in when absent: episode_id (from instance_id), sandbox image and
 * sandbox defaults (options), `metadata.source`. Tool-call arguments given as a JSON string are parsed; a string
 * that is not a JSON object stays a string and is reported (native files are strict, unlike recorded rollouts).
 */
export function importNativeEpisodes(file: InputFile, options: ImportOptions): ImportResult {
  const result = emptyResult();
  const ext = fileExtension(file.path);
  if (ext === 'jsonl' || ext === 'ndjson') {
    const { records, problems } = parseJsonLines(file);
    result.problems.push(...problems);
    for (const record of records)
      mergeInto(result, importRecord(record.value, { file: file.path, line: record.line }, options));
    return result;
  }
  const parsed = parseJsonText(file.text);
  if (!parsed.ok) {
    result.problems.push(jsonSyntaxProblem(file, parsed));
    return result;
  }
  if (Array.isArray(parsed.value)) {
    parsed.value.forEach((value, index) =>
      mergeInto(result, importRecord(value, { file: file.path, path: indexPath(index) }, options)),
    );
  } else {
    mergeInto(result, importRecord(parsed.value, { file: file.path }, options));
  }
  return result;
}

function importRecord(value: unknown, location: RecordLocation, options: ImportOptions): ImportResult {
  if (!isRecord(value)) {
    const result = emptyResult();
    result.problems.push(
      problemAt(location, {
        message: `expected an episode object, got ${describeType(value)}`,
        hint: 'give one episode object per line (JSONL) or an episode / array of episodes (JSON)',
      }),
    );
    return result;
  }
  const candidate: Record<string, unknown> = { ...value };
  const instanceId = typeof value['instance_id'] === 'string' ? value['instance_id'] : undefined;
  // --run is authoritative: a run is what the user submits under one id, whatever the records say.
  candidate['run_id'] = options.runId;
  if (candidate['episode_id'] === undefined && instanceId !== undefined)
    candidate['episode_id'] = episodeIdFor(instanceId);
  const sandbox = value['sandbox'];
  if (sandbox === undefined || isRecord(sandbox)) candidate['sandbox'] = sandboxFor(instanceId ?? '', sandbox, options);
  if (Array.isArray(value['trajectory'])) candidate['trajectory'] = value['trajectory'].map(parseStringArguments);
  const metadata = value['metadata'];
  if (metadata === undefined || isRecord(metadata)) {
    candidate['metadata'] = { source: formatLocation(location), ...metadata };
  }
  return finishEpisode(candidate, location, options);
}

function parseStringArguments(call: unknown): unknown {
  if (!isRecord(call) || typeof call['arguments'] !== 'string') return call;
  const parsed = parseJsonText(call['arguments']);
  return parsed.ok && isRecord(parsed.value) ? { ...call, arguments: parsed.value } : call;
}
