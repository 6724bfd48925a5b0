import { problemAt, type Problem, type RecordLocation } from '../validation/problem.js';
import { buildEpisodes } from './episode-builder.js';
import { describeType, fileExtension, fileStem, isRecord, jsonSyntaxProblem, parseJsonText } from './json-source.js';
import { describeSweAgentRecording, isAgentMessage, windowedActions } from './swe-agent-recording.js';
import { parseYamlText, yamlParseText } from './yaml-source.js';
import { contentText, toolCallInput } from './tool-arguments.js';
import { emptyResult, type ImportOptions, type ImportResult, type InputFile, type ToolCallInput } from './types.js';

/**
 * SWE-agent trajectories (trajectories-and-grading.md §1): `.traj` v1 and legacy 0.x (JSON), and demonstration
 * files (`.traj` with only `history`, or the YAML `{history, replay_config}` form).
 *
 * The episode names how it was recorded (swe-agent-recording.ts): `tool_bundle` (release line, bundles, window,
 * pty) and `repo_dir`, so the worker installs the same tools where the repository was.
 *
 * Actions:
 * - windowed tool set (`open`, `edit`, `find_file`, ...): each action as the agent ran it (`action`), from
 *   `trajectory[]` with its observation, or from `history` (swe-agent-recording.ts, `windowedActions`);
 * - otherwise, first source that has any: `history` assistant `tool_calls` (function name + parsed JSON
 *   arguments), each with the observation of the `tool` message answering its id — what SWE-agent's own replay
 *   feeds back (§1.5); `trajectory[].action` text as `execute_bash {command: action}`; `history` assistant
 *   `action` text, likewise.
 *
 * Control actions are not replayed: `submit` unless the recording's bundles include SWE-agent's `submit` tool
 * (otherwise our worker diffs the repository itself), a literal `exit` and the agent's own `exit_*`/`skip`; they
 * are listed in `metadata.skipped_actions`.
 * Demonstration messages (`is_demo`, message_type `demonstration`) and other agents' messages are ignored.
 */
export function importSweAgentTrajectory(file: InputFile, options: ImportOptions): ImportResult {
  const result = emptyResult();
  const location: RecordLocation = { file: file.path };
  const parsed = parseDocument(file);
  if (!parsed.ok) {
    result.problems.push(parsed.problem);
    return result;
  }
  const doc = parsed.value;
  if (!isRecord(doc) || (!Array.isArray(doc['history']) && !Array.isArray(doc['trajectory']))) {
    result.problems.push(
      problemAt(location, {
        message: `expected a SWE-agent trajectory object with a "history" or "trajectory" array, got ${describeKeys(doc)}`,
        hint: 'pass a .traj file written by SWE-agent, or a demonstration with a "history" list',
      }),
    );
    return result;
  }

  const history = Array.isArray(doc['history']) ? doc['history'] : [];
  const steps = Array.isArray(doc['trajectory']) ? doc['trajectory'] : [];
  const info = isRecord(doc['info']) ? doc['info'] : {};
  const skipped: string[] = [];
  const problems: Problem[] = [];

  const recording = describeSweAgentRecording(doc);
  const keepSubmit = recording.toolBundle.bundles?.includes('submit') ?? false;
  let actionsFrom = 'history.tool_calls';
  let trajectory: ToolCallInput[] | undefined;
  if (recording.windowed) {
    const windowed = windowedActions(doc, recording.toolBundle.bundles ?? [], skipped);
    trajectory = windowed.calls;
    actionsFrom = windowed.from;
  } else {
    trajectory = callsFromToolCalls(history, { skipped, problems, location, keepSubmit });
  }
  if (trajectory === undefined) {
    actionsFrom = steps.length > 0 ? 'trajectory.action' : 'history.action';
    const texts = steps.length > 0 ? textActionsFromSteps(steps) : textActionsFromHistory(history);
    trajectory = textCalls(texts, skipped);
  }
  if (problems.length > 0) {
    result.problems.push(...problems);
    return result;
  }

  const recorded = typeof info['submission'] === 'string' && info['submission'] !== '' ? info['submission'] : undefined;
  // Through a pty every LF of the patch arrived as CRLF: undo that, or the patch no longer applies.
  const submission =
    recorded !== undefined && recording.toolBundle.pty_observations === true
      ? recorded.replace(/\r\n/g, '\n').replace(/^\n+/, '')
      : recorded;
  if (options.replay === false) {
    if (submission === undefined) {
      result.problems.push(
        problemAt(location, {
          field: 'info.submission',
          message: 'no submission to grade',
          hint: 'replay the actions instead (drop --no-replay), or give a run that submitted a patch',
        }),
      );
      return result;
    }
    trajectory = [];
  }
  if (trajectory.length === 0 && submission === undefined) {
    result.problems.push(
      problemAt(location, {
        field: 'history',
        message: 'no actions to replay and no submission to grade',
        hint: 'the file has no assistant tool_calls in history and no trajectory[].action; check that it is a complete run',
      }),
    );
    return result;
  }

  const metadata: Record<string, string> = {
    source_format: 'swe-agent-traj',
    actions_from: actionsFrom,
    ...recording.evidence,
  };
  if (skipped.length > 0) metadata['skipped_actions'] = skipped.join(',');
  if (typeof info['exit_status'] === 'string') metadata['exit_status'] = info['exit_status'];
  if (typeof info['swe_agent_version'] === 'string') metadata['swe_agent_version'] = info['swe_agent_version'];
  if (typeof doc['environment'] === 'string') metadata['environment'] = doc['environment'];
  const workingDir = firstWorkingDir(steps);
  if (workingDir !== undefined) metadata['working_dir'] = workingDir;
  const agentImage = deploymentImage(doc['replay_config']);
  // SWE-agent's Docker image is informational only: it is not a sandbox image of ours.
  if (agentImage !== undefined) metadata['swe_agent_image'] = agentImage;

  return buildEpisodes(
    {
      instanceId: options.instanceId ?? fileStem(file.path),
      trajectory,
      // Only a real patch: a null/empty submission leaves grading to the replayed repository's own diff.
      ...(submission === undefined ? {} : { modelPatch: submission }),
      metadata,
      ...(recording.repoDir === undefined ? {} : { repoDir: recording.repoDir }),
      toolBundle: recording.toolBundle,
    },
    location,
    options,
  );
}

function parseDocument(file: InputFile): { ok: true; value: unknown } | { ok: false; problem: Problem } {
  const ext = fileExtension(file.path);
  if (ext === 'yaml' || ext === 'yml') {
    const parsed = parseYamlText(file.text);
    if (parsed.ok) return parsed;
    const at = parsed.line === undefined ? { file: file.path } : { file: file.path, line: parsed.line };
    return {
      ok: false,
      problem: problemAt(
        at,
        yamlParseText(parsed, 'fix the YAML syntax; a demonstration is a mapping with a "history" list'),
      ),
    };
  }
  const parsed = parseJsonText(file.text);
  return parsed.ok ? parsed : { ok: false, problem: jsonSyntaxProblem(file, parsed) };
}

function describeKeys(doc: unknown): string {
  if (!isRecord(doc)) return describeType(doc);
  const keys = Object.keys(doc).slice(0, 6);
  return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.join(', ')}`;
}

function toolResults(history: readonly unknown[]): Map<string, string> {
  const results = new Map<string, string>();
  for (const message of history) {
    if (!isRecord(message) || message['role'] !== 'tool') continue;
    const ids = Array.isArray(message['tool_call_ids']) ? message['tool_call_ids'] : [message['tool_call_id']];
    const text = contentText(message['content']);
    for (const id of ids) if (typeof id === 'string' && text !== undefined) results.set(id, text);
  }
  return results;
}

interface CallContext {
  skipped: string[];
  problems: Problem[];
  location: RecordLocation;
  /** The recording's bundles include SWE-agent's `submit`: it replays like any tool. */
  keepSubmit: boolean;
}

/** Undefined when no assistant message carries tool_calls (the caller then falls back to text actions). */
function callsFromToolCalls(history: readonly unknown[], context: CallContext): ToolCallInput[] | undefined {
  const observations = toolResults(history);
  const calls: ToolCallInput[] = [];
  let sawToolCalls = false;
  history.forEach((message, messageIndex) => {
    if (!isRecord(message) || message['role'] !== 'assistant' || !isAgentMessage(message)) return;
    const toolCalls = message['tool_calls'];
    if (!Array.isArray(toolCalls) || toolCalls.length === 0) return;
    sawToolCalls = true;
    toolCalls.forEach((toolCall, callIndex) => {
      const fn = isRecord(toolCall) && isRecord(toolCall['function']) ? toolCall['function'] : undefined;
      const name = fn?.['name'];
      if (typeof name !== 'string' || name === '') {
        context.problems.push(
          problemAt(context.location, {
            field: `history[${messageIndex}].tool_calls[${callIndex}].function.name`,
            message: `missing tool name (got ${describeType(name)})`,
            hint: 'each tool call needs {function: {name, arguments}}',
          }),
        );
        return;
      }
      if (name === 'submit' && !context.keepSubmit) {
        context.skipped.push(name);
        return;
      }
      calls.push(toolCallInput(name, toolCall, fn, observations));
    });
  });
  return sawToolCalls ? calls : undefined;
}

interface TextAction {
  action: string;
  observation?: string;
}

function textActionsFromSteps(steps: readonly unknown[]): TextAction[] {
  return steps.flatMap((step) => {
    if (!isRecord(step) || typeof step['action'] !== 'string') return [];
    const observation = step['observation'];
    return [typeof observation === 'string' ? { action: step['action'], observation } : { action: step['action'] }];
  });
}

function textActionsFromHistory(history: readonly unknown[]): TextAction[] {
  return history.flatMap((message) => {
    if (!isRecord(message) || message['role'] !== 'assistant' || !isAgentMessage(message)) return [];
    return typeof message['action'] === 'string' ? [{ action: message['action'] }] : [];
  });
}

function textCalls(actions: readonly TextAction[], skipped: string[]): ToolCallInput[] {
  const calls: ToolCallInput[] = [];
  for (const { action, observation } of actions) {
    const trimmed = action.trim();
    // Requery / format-error turns have no action to run.
    if (trimmed === '') continue;
    const first = trimmed.split(/\s+/)[0] ?? '';
    if (first === 'submit' || trimmed === 'exit') {
      skipped.push(first);
      continue;
    }
    const call: ToolCallInput = { name: 'execute_bash', arguments: { command: action } };
    if (observation !== undefined) call.observation = observation;
    calls.push(call);
  }
  return calls;
}

/** `state` is an object in v1 and a JSON string in 0.x (§1.4); `replay_config` likewise varies. */
function jsonObject(state: unknown): Record<string, unknown> | undefined {
  if (isRecord(state)) return state;
  if (typeof state !== 'string') return undefined;
  const parsed = parseJsonText(state);
  return parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
}

function firstWorkingDir(steps: readonly unknown[]): string | undefined {
  for (const step of steps) {
    const state = isRecord(step) ? jsonObject(step['state']) : undefined;
    const dir = state?.['working_dir'];
    if (typeof dir === 'string' && dir !== '') return dir;
  }
  return undefined;
}

/** `replay_config` is a JSON string in v1 files and an object in older ones. */
function deploymentImage(replayConfig: unknown): string | undefined {
  const config =
    typeof replayConfig === 'string' ? jsonObject(replayConfig) : isRecord(replayConfig) ? replayConfig : undefined;
  const env = config?.['env'];
  const deployment = isRecord(env) ? env['deployment'] : undefined;
  const image = isRecord(deployment) ? deployment['image'] : undefined;
  return typeof image === 'string' && image !== '' ? image : undefined;
}
