/**
 * What a SWE-agent trajectory says about how it was recorded (windowed-tools spec §1–§3): the tool bundle and
 * release line to reproduce, where the repository sat, whether observations came through a pty, and — for the
 * windowed tools — the actions to replay as the agent ran them.
 *
 * Evidence, first found wins:
 * - release line: `info.swe_agent_version`; else 1.x layout (tool calls, object `state`, `replay_config` bundles)
 *   without a stamp = a 1.x development build (`1.0-dev`); else 0.x by wording (`execution_time` → 0.7,
 *   "commmand" → 0.1, observations keeping their final newline → 0.3, otherwise 0.6.1);
 * - bundles: `replay_config.agent.tools.bundles`; else the tool names the actions use;
 * - repository: `replay_config.env.repo` (GitHub URL → `/<owner>__<repo>`, local path → `/<basename>`,
 *   preexisting → `/<repo_name>`); else the first `state.working_dir`; else the first `(Current directory: …)`
 *   footer in `history`; else the top directory most absolute paths in the actions share;
 * - pty: `info.swe_rex_version` below 1.3; else CRLF line endings in the recorded observations.
 */
import {
  SWE_AGENT_BUNDLES,
  type SweAgentBundle,
  type SweAgentVersion,
  type ToolBundleInput,
} from '@rollout-fleet/shared';
import { sweAgentActionFor } from '@rollout-fleet/sandbox';
import { isRecord, parseJsonText } from './json-source.js';
import { contentText, parseToolArguments } from './tool-arguments.js';
import type { ToolCallInput } from './types.js';

/** Tool names of the windowed set (SWE-agent `tools/{windowed,search,*edit*,submit}` and their 0.x functions). */
export const WINDOWED_TOOL_NAMES = [
  'open',
  'goto',
  'scroll_up',
  'scroll_down',
  'create',
  'edit',
  'insert',
  'search_file',
  'search_dir',
  'find_file',
];

/** Actions that end or skip a run inside the agent; they never ran in the shell. */
const AGENT_CONTROL_ACTIONS = new Set([
  'exit',
  'exit_forfeit',
  'exit_cost',
  'exit_context',
  'exit_error',
  'exit_format',
  'exit_api',
  'skip',
]);

export interface SweAgentRecording {
  toolBundle: ToolBundleInput & { name: 'swe-agent' };
  /** The windowed tool set is in use: actions replay from their recorded text. */
  windowed: boolean;
  repoDir?: string;
  /** Where each inference came from (result metadata). */
  evidence: Record<string, string>;
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  if (isRecord(value)) return value;
  if (typeof value !== 'string') return undefined;
  const parsed = parseJsonText(value);
  return parsed.ok && isRecord(parsed.value) ? parsed.value : undefined;
}

function path(value: unknown, ...keys: string[]): unknown {
  let at: unknown = value;
  for (const key of keys) {
    if (!isRecord(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

function firstWord(action: string): string {
  return action.trim().split(/\s+/)[0] ?? '';
}

interface Sources {
  doc: Record<string, unknown>;
  config: Record<string, unknown> | undefined;
  steps: unknown[];
  history: unknown[];
  info: Record<string, unknown>;
}

function sourcesOf(doc: Record<string, unknown>): Sources {
  return {
    doc,
    config: objectOf(doc['replay_config']),
    steps: Array.isArray(doc['trajectory']) ? doc['trajectory'] : [],
    history: Array.isArray(doc['history']) ? doc['history'] : [],
    info: isRecord(doc['info']) ? doc['info'] : {},
  };
}

/** The main agent's own turns: not demonstrations, not a reviewer's or summarizer's messages. */
export function isAgentMessage(message: Record<string, unknown>): boolean {
  const agent = message['agent'];
  return (
    message['is_demo'] !== true &&
    message['message_type'] !== 'demonstration' &&
    (agent === undefined || agent === 'main' || agent === 'primary')
  );
}

function agentMessages(history: readonly unknown[]): Record<string, unknown>[] {
  return history.filter((message): message is Record<string, unknown> => isRecord(message) && isAgentMessage(message));
}

function recordedObservations(s: Sources): string[] {
  const fromSteps = s.steps.flatMap((step) =>
    isRecord(step) && typeof step['observation'] === 'string' ? [step['observation']] : [],
  );
  const fromHistory = agentMessages(s.history).flatMap((m) =>
    m['role'] === 'tool' || m['message_type'] === 'observation' ? [contentText(m['content']) ?? ''] : [],
  );
  return [...fromSteps, ...fromHistory];
}

function actionsOf(s: Sources): string[] {
  const fromSteps = s.steps.flatMap((step) =>
    isRecord(step) && typeof step['action'] === 'string' ? [step['action']] : [],
  );
  const fromHistory = agentMessages(s.history).flatMap((m) =>
    m['role'] === 'assistant' && typeof m['action'] === 'string' ? [m['action']] : [],
  );
  const fromCalls = agentMessages(s.history).flatMap((m) =>
    (Array.isArray(m['tool_calls']) ? m['tool_calls'] : []).flatMap((call) => {
      const name = path(call, 'function', 'name');
      return typeof name === 'string' ? [name] : [];
    }),
  );
  return [...fromSteps, ...fromHistory, ...fromCalls];
}

function isV1Layout(s: Sources): boolean {
  if (isRecord(path(s.config, 'agent', 'tools'))) return true;
  if (s.steps.some((step) => isRecord(step) && isRecord(step['state']))) return true;
  return agentMessages(s.history).some((m) => Array.isArray(m['tool_calls']) && m['tool_calls'].length > 0);
}

function versionFromStamp(stamp: string): SweAgentVersion | undefined {
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(stamp.trim());
  if (!match) return undefined;
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
  if (major === 0) {
    if (minor <= 2) return '0.1';
    if (minor <= 5) return '0.3';
    if (minor === 6) return patch === 0 ? '0.6' : '0.6.1';
    return '0.7';
  }
  if (major === 1 && minor === 0) return '1.0';
  if (major === 1 && minor === 1) return '1.1';
  return 'main';
}

function inferVersion(s: Sources, v1: boolean): { version: SweAgentVersion; from: string } {
  const stamp = s.info['swe_agent_version'];
  if (typeof stamp === 'string') {
    const version = versionFromStamp(stamp);
    if (version !== undefined) return { version, from: 'info.swe_agent_version' };
  }
  if (v1) return { version: '1.0-dev', from: '1.x layout without a version stamp' };
  const observations = recordedObservations(s);
  if (s.steps.some((step) => isRecord(step) && Object.hasOwn(step, 'execution_time')))
    return { version: '0.7', from: 'execution_time (0.7)' };
  if (observations.some((text) => text.includes('retry your edit commmand')))
    return { version: '0.1', from: 'wording (0.1 lint header)' };
  if (
    observations.some((text) => text.includes('Usage: open "<file>"') || text.includes('WARNING: Scrolling many times'))
  ) {
    return { version: '0.7', from: 'wording (0.7)' };
  }
  const nonEmpty = observations.filter((text) => text.trim() !== '');
  if (nonEmpty.length > 0 && nonEmpty.filter((text) => text.endsWith('\n')).length * 2 > nonEmpty.length) {
    return { version: '0.3', from: 'observations keep their final newline (0.1–0.5)' };
  }
  return { version: '0.6.1', from: 'default for 0.x without other evidence' };
}

const BUNDLE_ALIASES: Readonly<Record<string, SweAgentBundle>> = {
  windowed: 'windowed',
  defaults: 'windowed',
  search: 'search',
  windowed_edit_linting: 'edit_linting',
  edit_linting: 'edit_linting',
  windowed_edit_replace: 'edit_replace',
  edit_replace: 'edit_replace',
  submit: 'submit',
};

function bundlesFromConfig(s: Sources): SweAgentBundle[] | undefined {
  const listed = path(s.config, 'agent', 'tools', 'bundles');
  if (!Array.isArray(listed)) return undefined;
  const names = listed.flatMap((entry) => {
    const raw = isRecord(entry) ? entry['path'] : entry;
    if (typeof raw !== 'string') return [];
    const alias = BUNDLE_ALIASES[raw.replace(/\/+$/, '').split('/').pop() ?? ''];
    return alias === undefined ? [] : [alias];
  });
  return [...new Set(names)];
}

function bundlesFromActions(actions: readonly string[], v1: boolean, s: Sources): SweAgentBundle[] {
  const replaceEdit =
    agentMessages(s.history).some((m) =>
      (Array.isArray(m['tool_calls']) ? m['tool_calls'] : []).some((call) => {
        const name = path(call, 'function', 'name');
        const args = parseToolArguments(path(call, 'function', 'arguments'));
        return name === 'insert' || (name === 'edit' && Object.hasOwn(args, 'search'));
      }),
    ) || actions.some((action) => firstWord(action) === 'insert');
  const lineEdit = actions.some((action) => /^\s*edit\s+\d+:\d+/.test(action));
  const edit: SweAgentBundle = !v1 || (lineEdit && !replaceEdit) ? 'edit_linting' : 'edit_replace';
  return ['windowed', 'search', edit, 'submit'];
}

function numberSetting(s: Sources, name: string): number | undefined {
  const value = path(s.config, 'agent', 'tools', 'env_variables', name);
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 0 ? number : undefined;
}

function repoDirFromConfig(s: Sources): string | undefined {
  const repo = path(s.config, 'env', 'repo');
  if (!isRecord(repo)) return undefined;
  const url = repo['github_url'];
  if (typeof url === 'string') {
    const parts = url
      .replace(/[?#].*$/, '')
      .replace(/\.git\/?$/, '')
      .split('/')
      .filter((part) => part !== '');
    const [owner, name] = parts.slice(-2);
    if (owner !== undefined && name !== undefined && !owner.includes(':')) return `/${owner}__${name}`;
  }
  const local = repo['path'];
  if (repo['type'] === 'local' && typeof local === 'string') {
    const base = local.replace(/\/+$/, '').split('/').pop();
    if (base !== undefined && base !== '') return `/${base}`;
  }
  const named = repo['repo_name'];
  if (typeof named === 'string' && named !== '') return named.startsWith('/') ? named : `/${named}`;
  return undefined;
}

function repoDirFromStates(s: Sources): string | undefined {
  for (const step of s.steps) {
    const dir = isRecord(step) ? objectOf(step['state'])?.['working_dir'] : undefined;
    if (typeof dir === 'string' && dir.startsWith('/')) return dir;
  }
  return undefined;
}

function repoDirFromFooters(s: Sources): string | undefined {
  for (const message of agentMessages(s.history)) {
    const dir = /\(Current directory: (\/[^\n)]*)\)/.exec(contentText(message['content']) ?? '')?.[1];
    if (dir !== undefined) return dir;
  }
  return undefined;
}

const SYSTEM_DIRS = new Set([
  '',
  'tmp',
  'usr',
  'etc',
  'root',
  'bin',
  'sbin',
  'lib',
  'lib64',
  'dev',
  'proc',
  'sys',
  'opt',
  'var',
  'home',
  'run',
  'mnt',
  'srv',
]);

function repoDirFromActions(actions: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const action of actions) {
    for (const match of action.matchAll(/(?:^|[\s"'=])\/([A-Za-z0-9._-]+)\//g)) {
      const top = match[1] ?? '';
      if (!SYSTEM_DIRS.has(top)) counts.set(top, (counts.get(top) ?? 0) + 1);
    }
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
  return best === undefined ? undefined : `/${best[0]}`;
}

function isPty(s: Sources, v1: boolean): { pty: boolean; from?: string } {
  if (!v1) return { pty: false };
  const rex = s.info['swe_rex_version'];
  if (typeof rex === 'string') {
    const [major = 0, minor = 0] = rex.split('.').map(Number);
    return { pty: major < 1 || (major === 1 && minor < 3), from: 'info.swe_rex_version' };
  }
  return recordedObservations(s).some((text) => text.includes('\r\n'))
    ? { pty: true, from: 'CRLF in observations' }
    : { pty: false };
}

export function describeSweAgentRecording(doc: Record<string, unknown>): SweAgentRecording {
  const s = sourcesOf(doc);
  const v1 = isV1Layout(s);
  const actions = actionsOf(s);
  const windowed = actions.some((action) => WINDOWED_TOOL_NAMES.includes(firstWord(action)));
  const evidence: Record<string, string> = {};
  const { version, from } = inferVersion(s, v1);
  evidence['swe_agent_version_from'] = from;
  const configured = bundlesFromConfig(s);
  let bundles: SweAgentBundle[];
  if (configured !== undefined && (configured.length > 0 || !windowed)) {
    bundles = configured;
    evidence['tool_bundles_from'] = 'replay_config';
  } else {
    bundles = windowed ? bundlesFromActions(actions, v1, s) : [];
    evidence['tool_bundles_from'] = windowed ? 'actions' : 'none';
  }
  if (!v1) bundles = bundles.filter((bundle) => bundle !== 'edit_replace');
  const pty = isPty(s, v1);
  if (pty.from !== undefined) evidence['pty_observations_from'] = pty.from;
  const candidates: Array<[string, string | undefined]> = [
    ['replay_config.env.repo', repoDirFromConfig(s)],
    ['state.working_dir', repoDirFromStates(s)],
    ['history footer', repoDirFromFooters(s)],
    ['paths in actions', repoDirFromActions(actions)],
  ];
  const found = candidates.find(([, dir]) => dir !== undefined);
  if (found !== undefined) evidence['repo_dir_from'] = found[0];
  const window = numberSetting(s, 'WINDOW');
  const overlap = numberSetting(s, 'OVERLAP');
  return {
    toolBundle: {
      name: 'swe-agent',
      version,
      bundles: SWE_AGENT_BUNDLES.filter((bundle) => bundles.includes(bundle)),
      ...(window !== undefined && window > 0 ? { window } : {}),
      ...(overlap !== undefined ? { overlap } : {}),
      pty_observations: pty.pty,
    },
    windowed,
    ...(found?.[1] === undefined ? {} : { repoDir: found[1] }),
    evidence,
  };
}

/** A trajectory's actions with their recorded observations, for the windowed tool set. */
export interface WindowedActions {
  calls: ToolCallInput[];
  from: 'trajectory.action' | 'history.action';
}

function callFor(action: string, observation: string | undefined, toolCall: unknown): ToolCallInput {
  const word = firstWord(action);
  const fn = path(toolCall, 'function');
  const name =
    typeof path(fn, 'name') === 'string'
      ? (path(fn, 'name') as string)
      : WINDOWED_TOOL_NAMES.includes(word) || word === 'submit'
        ? word
        : 'bash';
  const args =
    toolCall !== undefined ? parseToolArguments(path(fn, 'arguments')) : name === 'bash' ? { command: action } : {};
  const call: ToolCallInput = { name, arguments: args, action };
  const id = path(toolCall, 'id');
  if (typeof id === 'string') call.id = id;
  if (observation !== undefined) call.observation = observation;
  return call;
}

function isControl(action: string, bundles: readonly SweAgentBundle[]): boolean {
  const trimmed = action.trim();
  if (trimmed === '') return true;
  if (AGENT_CONTROL_ACTIONS.has(trimmed)) return true;
  return firstWord(trimmed) === 'submit' && !bundles.includes('submit');
}

/**
 * Steps to replay: `trajectory[]` (action + observation, no template footer) when present — a step whose action
 * is not the next one in `history` is a requery the agent never ran (format error, blocked or syntax-error
 * command) and is left out; steps after the last history action (the final `submit`) are kept. A file with only
 * `history` gives each assistant action with the next message as its observation (footer and all; the
 * comparison removes the template).
 */
export function windowedActions(
  doc: Record<string, unknown>,
  bundles: readonly SweAgentBundle[],
  skipped: string[],
): WindowedActions {
  const s = sourcesOf(doc);
  const messages = agentMessages(s.history);
  const assistant = messages
    .map((message, index) => ({ message, index }))
    .filter(({ message }) => message['role'] === 'assistant');
  const historyActions = assistant.flatMap(({ message, index }) => {
    const toolCall = Array.isArray(message['tool_calls']) ? message['tool_calls'][0] : undefined;
    let action = typeof message['action'] === 'string' ? message['action'] : undefined;
    if (action === undefined && toolCall !== undefined) {
      const name = path(toolCall, 'function', 'name');
      if (typeof name === 'string')
        action =
          name === 'bash'
            ? String(parseToolArguments(path(toolCall, 'function', 'arguments'))['command'] ?? '')
            : sweAgentActionFor(name, parseToolArguments(path(toolCall, 'function', 'arguments')), bundles);
    }
    if (action === undefined) return [];
    const next = messages[index + 1];
    const observation = next !== undefined && next['role'] !== 'assistant' ? contentText(next['content']) : undefined;
    return [{ action, observation, toolCall }];
  });
  const keep = (action: string): boolean => {
    if (!isControl(action, bundles)) return true;
    if (action.trim() !== '') skipped.push(firstWord(action));
    return false;
  };
  const steps = s.steps.filter(isRecord).filter((step) => typeof step['action'] === 'string');
  if (steps.length > 0) {
    const align = (useHistory: boolean): { calls: ToolCallInput[]; matched: number } => {
      const calls: ToolCallInput[] = [];
      let next = 0;
      for (const step of steps) {
        const action = step['action'] as string;
        const observation = typeof step['observation'] === 'string' ? step['observation'] : undefined;
        const expected = useHistory ? historyActions[next] : undefined;
        if (expected !== undefined && expected.action.trim() !== action.trim()) continue;
        if (expected !== undefined) next += 1;
        if (keep(action)) calls.push(callFor(action, observation, expected?.toolCall));
      }
      return { calls, matched: next };
    };
    const aligned = align(historyActions.length > 0);
    // History written in another shape than the trajectory (no action matched): take every step instead.
    if (historyActions.length > 0 && aligned.matched === 0) {
      skipped.length = 0;
      return { calls: align(false).calls, from: 'trajectory.action' };
    }
    return { calls: aligned.calls, from: 'trajectory.action' };
  }
  const calls = historyActions
    .filter(({ action }) => keep(action))
    .map(({ action, observation, toolCall }) => callFor(action, observation, toolCall));
  return { calls, from: 'history.action' };
}
