import { problemAt, type Problem, type RecordLocation } from '../validation/problem.js';
import { buildEpisodes, episodeIdFor, type EpisodeDraft } from './episode-builder.js';
import {
  describeType,
  fileExtension,
  fileStem,
  indexPath,
  isRecord,
  jsonSyntaxProblem,
  parseJsonLines,
  parseJsonText,
} from './json-source.js';
import { contentText, toolCallInput } from './tool-arguments.js';
import {
  emptyResult,
  mergeInto,
  type ImportOptions,
  type ImportResult,
  type InputFile,
  type ToolCallInput,
} from './types.js';

/**
 * OpenAI chat messages with tool calls (trajectories-and-grading.md §2.1). (mini-swe-agent's `{info, messages}`
 * files have their own importer, mini-swe-agent.ts.) Accepted shapes:
 * - a JSON array of messages, or one `{messages, instance_id?}` object → one episode;
 * - a JSON array of `{messages, ...}` objects, or JSONL with one such object (or bare message array) per line.
 *
 * Trajectory: every assistant `tool_calls` entry in order (several per message are fine), arguments parsed from
 * their JSON string; a malformed string becomes `{__raw}` (an error observation at replay, not a file error).
 * The `tool` message with the matching `tool_call_id` becomes the recorded observation. Every call is kept,
 * including `finish`, except SWE-agent's argument-less `submit`: it ends an episode rather than running anything
 * (a policy episode's exported messages end with it), so it is skipped and listed in `metadata.skipped_actions`,
 * as the SWE-agent importer does.
 *
 * Optional record keys: `instance_id`, `episode_id`, `sample_index`, `model_patch` (or mini-swe-agent's
 * `info.submission`), `image_name`. Instance id default: `--instance` or the file stem for single-episode files,
 * `<stem>-<index>` for multi-record files.
 */
export function importOpenAiMessages(file: InputFile, options: ImportOptions): ImportResult {
  const result = emptyResult();
  const stem = fileStem(file.path);
  const ext = fileExtension(file.path);
  if (ext === 'jsonl' || ext === 'ndjson') {
    const { records, problems } = parseJsonLines(file);
    result.problems.push(...problems);
    records.forEach((record, index) => {
      mergeInto(
        result,
        importConversation(record.value, { file: file.path, line: record.line }, options, `${stem}-${index}`),
      );
    });
    return result;
  }
  const parsed = parseJsonText(file.text);
  if (!parsed.ok) {
    result.problems.push(jsonSyntaxProblem(file, parsed));
    return result;
  }
  const value = parsed.value;
  if (Array.isArray(value) && !value.every((item) => isRecord(item) && Array.isArray(item['messages']))) {
    // A bare message list: the whole file is one conversation.
    mergeInto(result, importConversation(value, { file: file.path }, options, options.instanceId ?? stem));
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      mergeInto(
        result,
        importConversation(item, { file: file.path, path: indexPath(index) }, options, `${stem}-${index}`),
      );
    });
  } else {
    mergeInto(result, importConversation(value, { file: file.path }, options, options.instanceId ?? stem));
  }
  return result;
}

function importConversation(
  value: unknown,
  location: RecordLocation,
  options: ImportOptions,
  defaultInstanceId: string,
): ImportResult {
  const result = emptyResult();
  const record = Array.isArray(value) ? { messages: value } : value;
  if (!isRecord(record) || !Array.isArray(record['messages'])) {
    result.problems.push(
      problemAt(location, {
        field: 'messages',
        message: `expected a list of chat messages, got ${isRecord(record) ? describeType(record['messages']) : describeType(record)}`,
        hint: 'give {"messages": [...]} (optionally with "instance_id") or a bare list of {role, content, tool_calls?} messages',
      }),
    );
    return result;
  }
  const problems: Problem[] = [];
  const skipped: string[] = [];
  const trajectory = callsFromMessages(record['messages'], location, problems, skipped);
  if (problems.length > 0) {
    result.problems.push(...problems);
    return result;
  }
  const modelPatch = patchOf(record);
  if (trajectory.length === 0 && modelPatch === undefined) {
    result.problems.push(
      problemAt(location, {
        field: 'messages',
        message: 'no assistant tool_calls to replay and no model_patch to grade',
        hint: 'only function-calling transcripts can be replayed; text-only transcripts (actions inside message text) are not supported',
      }),
    );
    return result;
  }
  const instanceId =
    typeof record['instance_id'] === 'string' && record['instance_id'] !== ''
      ? record['instance_id']
      : defaultInstanceId;
  const draft: EpisodeDraft = {
    instanceId,
    episodeId: typeof record['episode_id'] === 'string' ? record['episode_id'] : episodeIdFor(instanceId),
    trajectory,
    metadata: {
      source_format: 'openai-messages',
      ...(skipped.length > 0 ? { skipped_actions: skipped.join(',') } : {}),
    },
  };
  if (typeof record['sample_index'] === 'number') draft.sampleIndex = record['sample_index'];
  if (typeof record['image_name'] === 'string') draft.recordImage = record['image_name'];
  if (modelPatch !== undefined) draft.modelPatch = modelPatch;
  return buildEpisodes(draft, location, options);
}

function patchOf(record: Record<string, unknown>): string | undefined {
  if (typeof record['model_patch'] === 'string' && record['model_patch'] !== '') return record['model_patch'];
  const info = record['info'];
  const submission = isRecord(info) ? info['submission'] : undefined;
  return typeof submission === 'string' && submission !== '' ? submission : undefined;
}

function callsFromMessages(
  messages: readonly unknown[],
  location: RecordLocation,
  problems: Problem[],
  skipped: string[],
): ToolCallInput[] {
  const observations = new Map<string, string>();
  for (const message of messages) {
    if (!isRecord(message) || message['role'] !== 'tool' || typeof message['tool_call_id'] !== 'string') continue;
    const text = contentText(message['content']);
    if (text !== undefined) observations.set(message['tool_call_id'], text);
  }
  const calls: ToolCallInput[] = [];
  messages.forEach((message, messageIndex) => {
    if (!isRecord(message) || message['role'] !== 'assistant' || !Array.isArray(message['tool_calls'])) return;
    message['tool_calls'].forEach((toolCall, callIndex) => {
      const fn = isRecord(toolCall) && isRecord(toolCall['function']) ? toolCall['function'] : undefined;
      const name = fn?.['name'];
      if (typeof name !== 'string' || name === '') {
        problems.push(
          problemAt(location, {
            field: `messages[${messageIndex}].tool_calls[${callIndex}].function.name`,
            message: `missing tool name (got ${describeType(name)})`,
            hint: 'each tool call needs {id, type: "function", function: {name, arguments}}',
          }),
        );
        return;
      }
      const call = toolCallInput(name, toolCall, fn, observations);
      if (name === 'submit' && Object.keys(call.arguments).length === 0) {
        skipped.push(name);
        return;
      }
      calls.push(call);
    });
  });
  return calls;
}
