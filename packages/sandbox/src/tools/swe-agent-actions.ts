/**
 * SWE-agent actions (windowed-tools spec §3): the command line a recorded action ran as, and the action a
 * function call of the windowed tools became. Quirks are reproduced, because they are part of what was recorded.
 */
import { shellQuote } from './shell-quote.js';
import { pyStr, pyStrip } from './python-text.js';
import type { SweAgentBundle } from '@rollout-fleet/shared';

/** Tools with a multi-line argument end at a marker line and are sent as a quoted heredoc. */
const END_MARKERS: Readonly<Record<string, string>> = { edit: 'end_of_edit' };

/**
 * SWE-agent's heredoc guard (`_guard_multiline_input`): the first line of each `edit … end_of_edit` block gains
 * ` << 'end_of_edit'`. Upstream slices the matched block by its offset in the *remaining* text, so text before an
 * edit cuts as many characters off the edit (`ls\nedit 1:2…` runs `t 1:2…`); kept, since recordings show it.
 */
export function guardMultilineAction(
  action: string,
  endMarkers: Readonly<Record<string, string>> = END_MARKERS,
): string {
  const patterns = Object.entries(endMarkers).map(
    ([name, end]) => new RegExp(`^\\s*(${escapeRegExp(name)})\\s*(.*?)^(${escapeRegExp(end)})\\s*$`, 'ms'),
  );
  const parts: string[] = [];
  let rest = action;
  while (pyStrip(rest) !== '') {
    const match = firstMatch(rest, patterns);
    if (match === undefined) {
      parts.push(rest);
      break;
    }
    const start = match.index;
    const end = start + match[0].length;
    const before = rest.slice(0, start);
    const block = rest.slice(start, end);
    rest = rest.slice(end);
    if (pyStrip(before) !== '') parts.push(before);
    if (pyStrip(block) === '') continue;
    const eof = pyStrip(match[3] ?? '');
    const heredoc = ` << '${eof}'`;
    if (pyStrip(block.split('\n')[0] ?? '').endsWith(heredoc.trim())) {
      parts.push(block);
      continue;
    }
    const guarded = block.slice(start);
    const firstLine = guarded.split('\n')[0] ?? '';
    parts.push(guarded.replace(firstLine, () => firstLine + heredoc));
  }
  return parts.join('\n');
}

function firstMatch(text: string, patterns: readonly RegExp[]): RegExpExecArray | undefined {
  let best: RegExpExecArray | undefined;
  for (const pattern of patterns) {
    const match = pattern.exec(text);
    if (match && (best === undefined || match.index < best.index)) best = match;
  }
  return best;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The command line a recorded SWE-agent action runs as: heredoc-guarded when the edit has an end marker, stripped. */
export function sweAgentActionCommand(action: string, bundles: readonly SweAgentBundle[]): string {
  const guarded = bundles.includes('edit_linting') ? guardMultilineAction(action) : action;
  return pyStrip(guarded);
}

interface WindowedSignature {
  readonly signature: string;
  /** Multi-line tools take their strings raw (no shell quoting). */
  readonly endName?: string;
}

/** Signatures of the windowed tools' function-calling form (SWE-agent `tools/<bundle>/config.yaml`). */
export const SWE_AGENT_SIGNATURES: Readonly<Record<string, WindowedSignature>> = {
  goto: { signature: 'goto <line_number>' },
  open: { signature: 'open "<path>" [<line_number>]' },
  create: { signature: 'create <filename>' },
  scroll_up: { signature: 'scroll_up' },
  scroll_down: { signature: 'scroll_down' },
  find_file: { signature: 'find_file <file_name> [<dir>]' },
  search_dir: { signature: 'search_dir <search_term> [<dir>]' },
  search_file: { signature: 'search_file <search_term> [<file>]' },
  insert: { signature: 'insert <text> [<line>]' },
  submit: { signature: 'submit' },
};

const EDIT_REPLACE: WindowedSignature = { signature: 'edit <search> <replace> [<replace-all>]' };
const EDIT_LINTING: WindowedSignature = {
  signature: 'edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit',
  endName: 'end_of_edit',
};

/** Names the bundles provide (the `bash` tool runs its command as it is). */
export function sweAgentToolNames(bundles: readonly SweAgentBundle[]): string[] {
  const names: string[] = [];
  if (bundles.includes('windowed')) names.push('goto', 'open', 'create', 'scroll_up', 'scroll_down');
  if (bundles.includes('search')) names.push('find_file', 'search_dir', 'search_file');
  if (bundles.includes('edit_linting') || bundles.includes('edit_replace')) names.push('edit');
  if (bundles.includes('edit_replace')) names.push('insert');
  if (bundles.includes('submit')) names.push('submit');
  return names;
}

/**
 * The action SWE-agent's function-calling parser made of a windowed tool call: each `<arg>` / `[<arg>]` slot of
 * the signature filled (strings `shlex.quote`d unless the tool has an end marker; numbers and booleans as Python
 * prints them; absent ones empty), then stripped. So `open "<path>"` around a path that needs quotes gains
 * literal quotes and fails, as it did. Undefined for a name the bundles do not provide.
 */
export function sweAgentActionFor(
  name: string,
  args: Readonly<Record<string, unknown>>,
  bundles: readonly SweAgentBundle[],
): string | undefined {
  if (!sweAgentToolNames(bundles).includes(name)) return undefined;
  const spec =
    name === 'edit' ? (bundles.includes('edit_replace') ? EDIT_REPLACE : EDIT_LINTING) : SWE_AGENT_SIGNATURES[name];
  if (spec === undefined) return undefined;
  const filled = spec.signature.replace(
    /\[<([\w-]+)>\]|<([\w-]+)>/g,
    (_match, optional: string | undefined, required: string | undefined) => {
      const key = optional ?? required ?? '';
      if (!Object.hasOwn(args, key)) return '';
      const value = args[key];
      if (value === null || value === undefined) return '';
      if (typeof value === 'string') return spec.endName === undefined ? shellQuote(value) : value;
      return pyStr(value);
    },
  );
  return pyStrip(filled);
}
