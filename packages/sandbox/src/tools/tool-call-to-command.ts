/**
 * Tool call → shell command line, by SWE-agent's FunctionCallingParser rules (tools spec §2.1):
 * unknown tool / bad JSON / missing or unexpected arguments are checked in that order; present arguments are
 * rendered (strings shell-quoted except for bash, null → empty, numbers and booleans Python-style) through their
 * `argument_format`; slots are filled in signature order and the result is trimmed.
 *
 * Choices beyond the reference (documented in the tool bundle README):
 * - `execute_bash` is an alias of `bash`: its command runs raw in the persistent session, like SWE-agent's
 *   bash tool and OpenHands' execute_bash (`cd`/`export` persist). It also accepts R2E-Gym's `cmd` for
 *   `command`, ignores OpenHands' `timeout` / `security_risk`, and rejects `is_input: true`.
 * - a `view_range` given as a string is passed as one quoted argument (our editor parses `'[1, 10]'`),
 *   where Jinja's `join` would have spread its characters; string items of a list are shell-quoted.
 */
import { pyStr, pyStrip } from './python-text.js';
import { shellQuote } from './shell-quote.js';
import { TOOL_SPECS, isToolCallName } from './tool-catalogue.js';
import type { ToolSpec } from './tool-catalogue.js';

export interface ToolCallInput {
  readonly name: string;
  /** The call's arguments: an object, or the JSON string the model produced. */
  readonly arguments: Record<string, unknown> | string;
}

export interface ToolCallError {
  readonly code: 'TOOL_ERROR';
  /** The observation the reference agent would show the model (its format-error template, rendered). */
  readonly message: string;
}

export type ToolCommandResult = { ok: true; command: string } | { ok: false; error: ToolCallError };

const UNEXPECTED_ARG_HINT =
  "Make sure your function call doesn't include any extra arguments that are not in the allowed arguments, and only use the allowed commands.";

/** SWE-agent's FunctionCallingParser error template (`error_message`) for a parse failure. */
function parseError(message: string, kind: 'unexpected_arg' | 'other' = 'other'): ToolCommandResult {
  const text = `Your action could not be parsed properly: ${message}.`;
  return {
    ok: false,
    error: { code: 'TOOL_ERROR', message: kind === 'unexpected_arg' ? `${text}\n${UNEXPECTED_ARG_HINT}` : text },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Step<T> = { values: T } | { failed: ToolCommandResult };

function parseArguments(raw: ToolCallInput['arguments']): Step<Record<string, unknown>> {
  if (typeof raw !== 'string') return { values: raw };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { failed: parseError('Tool call arguments are not valid JSON') };
  }
  // The reference crashes on valid JSON that is not an object; report it like invalid JSON instead.
  return isPlainObject(parsed)
    ? { values: parsed }
    : { failed: parseError('Tool call arguments are not a JSON object') };
}

const IGNORED_EXECUTE_BASH_ARGUMENTS = ['timeout', 'security_risk'];

/** Map the execute_bash dialects (OpenHands, R2E-Gym, rLLM) onto the bash tool's single `command`. */
function normaliseExecuteBash(values: Record<string, unknown>): Step<Record<string, unknown>> {
  const normalised: Record<string, unknown> = { ...values };
  if (Object.hasOwn(normalised, 'cmd') && !Object.hasOwn(normalised, 'command')) {
    normalised.command = normalised.cmd;
    delete normalised.cmd;
  }
  for (const key of IGNORED_EXECUTE_BASH_ARGUMENTS) delete normalised[key];
  if (Object.hasOwn(normalised, 'is_input')) {
    const isInput = normalised.is_input;
    if (isInput === true || (typeof isInput === 'string' && isInput.toLowerCase() === 'true')) {
      return {
        failed: parseError(
          'Sending input to a running process (is_input=true) is not supported; run a complete command instead',
        ),
      };
    }
    delete normalised.is_input;
  }
  return { values: normalised };
}

/**
 * The command of the most common call, `bash`/`execute_bash` with exactly one string `command` argument,
 * whose rendering is the value itself (signature `<command>`, format `{{value}}`, no quoting): what the
 * general path below gives for it, without its checks and template work (a replayed trajectory converts one
 * call per step). Anything else: undefined.
 */
function plainBashCommand(call: ToolCallInput): string | undefined {
  if (call.name !== 'bash' && call.name !== 'execute_bash') return undefined;
  const args = call.arguments;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
  let command: unknown;
  let keys = 0;
  for (const key in args) {
    if (!Object.hasOwn(args, key)) continue;
    keys += 1;
    if (key !== 'command') return undefined;
    command = args[key];
  }
  return keys === 1 && typeof command === 'string' ? command : undefined;
}

function quoteIfNeeded(value: string, spec: ToolSpec): string {
  return spec.quoteStrings ? shellQuote(value) : value;
}

/** Renders the two `argument_format` shapes the catalogue uses, the way Jinja would (see module notes). */
function renderArgument(format: string, value: unknown, spec: ToolSpec): string {
  const join = /^(.*)\{\{value\|join\('([^']*)'\)\}\}(.*)$/s.exec(format);
  if (join) {
    const [, before = '', separator = '', after = ''] = join;
    let rendered: string;
    if (value === null) rendered = '';
    else if (Array.isArray(value))
      rendered = value
        .map((item) => (typeof item === 'string' ? quoteIfNeeded(item, spec) : pyStr(item)))
        .join(separator);
    else if (typeof value === 'string') rendered = quoteIfNeeded(value, spec);
    else rendered = pyStr(value);
    return `${before}${rendered}${after}`;
  }
  let rendered: string;
  if (value === null) rendered = '';
  else if (typeof value === 'string') rendered = quoteIfNeeded(value, spec);
  else rendered = pyStr(value);
  return format.replaceAll('{{value}}', () => rendered);
}

export function toolCallToCommand(call: ToolCallInput): ToolCommandResult {
  const plain = plainBashCommand(call);
  if (plain !== undefined) return { ok: true, command: pyStrip(plain) };
  if (!isToolCallName(call.name)) {
    return parseError(`Command '${call.name}' not found in list of available commands.`);
  }
  const spec = TOOL_SPECS[call.name];
  let step = parseArguments(call.arguments);
  if ('values' in step && spec.name === 'execute_bash') step = normaliseExecuteBash(step.values);
  if ('failed' in step) return step.failed;
  const args = step.values;

  const missing = spec.arguments.filter((argument) => argument.required && !Object.hasOwn(args, argument.name));
  if (missing.length > 0) {
    return parseError(`Required argument(s) missing: ${missing.map((argument) => argument.name).join(', ')}`);
  }
  const declared = new Set(spec.arguments.map((argument) => argument.name));
  const unexpected = Object.keys(args).filter((key) => !declared.has(key));
  if (unexpected.length > 0) {
    return parseError(`Unexpected argument(s): ${unexpected.join(', ')}`, 'unexpected_arg');
  }

  const slots = new Map<string, string>();
  for (const argument of spec.arguments) {
    slots.set(
      argument.name,
      Object.hasOwn(args, argument.name) ? renderArgument(argument.argumentFormat, args[argument.name], spec) : '',
    );
  }
  const command = spec.signature.replace(
    /\[<(\w+)>\]|<(\w+)>/g,
    (_match, optional: string | undefined, required: string | undefined) => slots.get(optional ?? required ?? '') ?? '',
  );
  return { ok: true, command: pyStrip(command) };
}
