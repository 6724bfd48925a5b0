import { problemAt, type Problem, type RecordLocation } from '../validation/problem.js';
import { buildEpisodes, type EpisodeDraft } from './episode-builder.js';
import { describeType, fileStem, isRecord, jsonSyntaxProblem, parseJsonText } from './json-source.js';
import { contentText, parseToolArguments } from './tool-arguments.js';
import { emptyResult, type ImportOptions, type ImportResult, type InputFile, type ToolCallInput } from './types.js';

/**
 * mini-swe-agent trajectories (policy-loop.md §4, trajectories-and-grading.md §2.2): a `.traj.json` object
 * `{info, messages, trajectory_format}` or a bare list of `{role, content}` messages.
 *
 * Actions, in message order:
 * - text mode (1.x, and 2.x's text-based model): an assistant message with exactly one fenced block
 *   (```` ```bash ```` or ```` ```mswea_bash_command ````, or one `<mswea_bash_command>` element) is one action,
 *   with the next message (`<returncode>N</returncode>` + `<output>…</output>`) as its recorded observation. A
 *   message with none or several was a format error: the agent ran nothing and asked again, so it is skipped;
 * - tool calling (2.x): every `bash` tool call of an assistant message is one action, with the `tool` message
 *   answering its id as the recorded observation; calls whose arguments have no `command` were format errors.
 * Each action becomes an `execute_bash` step; the replay runs it like mini-swe-agent did, in a fresh `bash -c` in
 * the repository (`tool_bundle: {name: "mini-swe-agent"}`; repository = `info.config.environment.cwd`, default
 * /testbed). The action that prints the submission sentinel ends the episode (it is replayed; nothing after it).
 * `info.submission` is graded as the prediction when replay is turned off (`--no-replay`).
 */
export const MINI_SENTINELS = ['COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT', 'MINI_SWE_AGENT_FINAL_OUTPUT'];

const FENCED = /```(?:bash|mswea_bash_command)\s*\n(.*?)\n```/gs;
const XML_ACTION = /<mswea_bash_command>(.*?)<\/mswea_bash_command>/gs;

/** Does this JSON value look like a mini-swe-agent trajectory (for format detection)? */
export function isMiniSweAgentTrajectory(value: unknown): boolean {
  if (isRecord(value)) {
    const format = value['trajectory_format'];
    if (typeof format === 'string' && format.startsWith('mini-swe-agent')) return true;
    const info = value['info'];
    if (
      isRecord(info) &&
      (typeof info['mini_version'] === 'string' ||
        String(pathOf(info, 'config', 'agent_type') ?? '').startsWith('minisweagent'))
    )
      return true;
    return false;
  }
  if (!Array.isArray(value)) return false;
  // A bare message list whose assistant turns carry fenced bash actions and no tool calls.
  const assistant = value.filter((message) => isRecord(message) && message['role'] === 'assistant');
  return (
    assistant.length > 0 &&
    assistant.every((message) => isRecord(message) && !Array.isArray(message['tool_calls'])) &&
    assistant.some(
      (message) => textActions(contentText((message as Record<string, unknown>)['content']) ?? '').length > 0,
    )
  );
}

function pathOf(value: unknown, ...keys: string[]): unknown {
  let at: unknown = value;
  for (const key of keys) {
    if (!isRecord(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function textActions(text: string): string[] {
  const fenced = [...text.matchAll(FENCED)].map((match) => match[1] ?? '');
  return fenced.length > 0 ? fenced : [...text.matchAll(XML_ACTION)].map((match) => (match[1] ?? '').trim());
}

function isSubmission(command: string): boolean {
  return MINI_SENTINELS.some((sentinel) => command.includes(sentinel));
}

interface Extracted {
  calls: ToolCallInput[];
  skippedFormatErrors: number;
  from: 'tool_calls' | 'text';
}

function extractActions(messages: readonly unknown[], location: RecordLocation, problems: Problem[]): Extracted {
  const toolReplies = new Map<string, string>();
  messages.forEach((message) => {
    if (isRecord(message) && message['role'] === 'tool' && typeof message['tool_call_id'] === 'string') {
      toolReplies.set(message['tool_call_id'], contentText(message['content']) ?? '');
    }
  });
  const calls: ToolCallInput[] = [];
  let skippedFormatErrors = 0;
  let from: Extracted['from'] = 'text';
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message)) {
      problems.push(
        problemAt(location, {
          field: `messages[${index}]`,
          message: `expected a message object, got ${describeType(message)}`,
          hint: 'each message is {"role": ..., "content": ...}',
        }),
      );
      continue;
    }
    if (typeof message['role'] !== 'string') {
      problems.push(
        problemAt(location, {
          field: `messages[${index}].role`,
          message: `missing role (got ${describeType(message['role'])})`,
          hint: 'each message needs a "role" (system, user, assistant, tool or exit)',
        }),
      );
      continue;
    }
    if (message['role'] !== 'assistant') continue;
    const toolCalls = message['tool_calls'];
    if (Array.isArray(toolCalls) && toolCalls.length > 0) {
      from = 'tool_calls';
      toolCalls.forEach((toolCall, callIndex) => {
        const name = pathOf(toolCall, 'function', 'name');
        if (typeof name !== 'string' || name === '') {
          problems.push(
            problemAt(location, {
              field: `messages[${index}].tool_calls[${callIndex}].function.name`,
              message: `missing tool name (got ${describeType(name)})`,
              hint: 'each tool call needs {id, type: "function", function: {name, arguments}}',
            }),
          );
          return;
        }
        const command = parseToolArguments(pathOf(toolCall, 'function', 'arguments'))['command'];
        if (name !== 'bash' || typeof command !== 'string') {
          skippedFormatErrors += 1;
          return;
        }
        const call: ToolCallInput = { name: 'execute_bash', arguments: { command } };
        const id = pathOf(toolCall, 'id');
        if (typeof id === 'string') {
          call.id = id;
          const reply = toolReplies.get(id);
          if (reply !== undefined) call.observation = reply;
        }
        calls.push(call);
      });
    } else {
      const actions = textActions(contentText(message['content']) ?? '');
      if (actions.length !== 1) {
        skippedFormatErrors += 1;
        continue;
      }
      const call: ToolCallInput = { name: 'execute_bash', arguments: { command: actions[0] ?? '' } };
      const next = messages[index + 1];
      if (isRecord(next) && next['role'] !== 'assistant' && next['role'] !== 'exit') {
        const observation = contentText(next['content']);
        if (observation !== undefined) call.observation = observation;
      }
      calls.push(call);
    }
    const last = calls[calls.length - 1];
    if (last !== undefined && isSubmission(String(last.arguments['command'] ?? ''))) {
      // The sentinel's output was the submission, not an observation the model saw.
      delete last.observation;
      break;
    }
  }
  return { calls, skippedFormatErrors, from };
}

export function importMiniSweAgent(file: InputFile, options: ImportOptions): ImportResult {
  const result = emptyResult();
  const location: RecordLocation = { file: file.path };
  const parsed = parseJsonText(file.text);
  if (!parsed.ok) {
    result.problems.push(jsonSyntaxProblem(file, parsed));
    return result;
  }
  const doc = parsed.value;
  const messages = Array.isArray(doc) ? doc : isRecord(doc) ? doc['messages'] : undefined;
  if (!Array.isArray(messages)) {
    result.problems.push(
      problemAt(location, {
        field: 'messages',
        message: `expected a list of messages, got ${isRecord(doc) ? describeType(doc['messages']) : describeType(doc)}`,
        hint: 'give a mini-swe-agent .traj.json ({"info", "messages", "trajectory_format"}) or a bare list of {role, content} messages',
      }),
    );
    return result;
  }
  const info = isRecord(doc) && isRecord(doc['info']) ? doc['info'] : {};
  const problems: Problem[] = [];
  const extracted = extractActions(messages, location, problems);
  if (problems.length > 0) {
    result.problems.push(...problems);
    return result;
  }
  const replay = options.replay !== false;
  const submission = typeof info['submission'] === 'string' ? info['submission'] : undefined;
  if ((replay && extracted.calls.length === 0) || (!replay && submission === undefined)) {
    result.problems.push(
      problemAt(location, {
        field: replay ? 'messages' : 'info.submission',
        message: replay ? 'no bash actions to replay' : 'no info.submission to grade',
        hint: replay
          ? 'assistant messages need one ```bash block (or a bash tool call) each; pass --no-replay to grade info.submission only'
          : 'replay the actions instead (drop --no-replay), or give a file with info.submission',
      }),
    );
    return result;
  }
  const metadata: Record<string, string> = { source_format: 'mini-swe-agent', actions_from: extracted.from };
  for (const key of ['mini_version', 'exit_status'] as const)
    if (typeof info[key] === 'string') metadata[key] = info[key];
  if (isRecord(doc) && typeof doc['trajectory_format'] === 'string')
    metadata['trajectory_format'] = doc['trajectory_format'];
  if (extracted.skippedFormatErrors > 0) metadata['skipped_format_errors'] = String(extracted.skippedFormatErrors);
  const cwd = pathOf(info, 'config', 'environment', 'cwd');
  const instance = info['instance_id'];
  const draft: EpisodeDraft = {
    instanceId:
      options.instanceId ??
      (typeof instance === 'string' && instance !== '' ? instance : fileStem(file.path).replace(/\.traj$/, '')),
    trajectory: replay ? extracted.calls : [],
    metadata,
    ...(typeof cwd === 'string' && cwd.startsWith('/') ? { repoDir: cwd } : {}),
    toolBundle: {
      name: 'mini-swe-agent',
      ...(typeof info['mini_version'] === 'string' ? { version: info['mini_version'] } : {}),
    },
  };
  // Replayed: the replayed repository's diff is graded. Not replayed: the recorded submission is.
  if (!replay) draft.modelPatch = submission === '' ? null : (submission ?? null);
  return buildEpisodes(draft, location, options);
}
