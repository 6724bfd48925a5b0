/**
 * The tool sets a policy can be trained on (policy-loop.md §3, §4; tools.md §2, §4, §5): the `tools` schemas sent
 * to the endpoint, how one tool call becomes a command line, how an executed command reads back to the model,
 * how the episode is submitted, and the default prompt templates. The schemas have the reference agents' shape
 * (names, parameters, types, required lists); descriptions are ours.
 */
import type { ToolName, ToolProfileName } from '@rollout-fleet/shared';
import {
  shellQuote,
  toolCallToCommand,
  type ToolCallInput,
  type ToolCommandResult,
  BASH_TOOL,
  EXECUTE_BASH_TOOL,
  STR_REPLACE_EDITOR_TOOL,
  toOpenAiToolSchema,
  type OpenAiToolSchema,
} from '@rollout-fleet/sandbox';
import { DEFAULT_TEMPLATES, MINI_SUBMIT_SENTINEL } from '@rollout-fleet/shared';
import { clipSweAgentObservation, miniObservation, seedObservation } from './observation-format.js';

/** A command's outcome as the profile renders it for the model. */
export interface ExecutedCommand {
  /** Output as the executor produced it (a timeout's notice replaces the output). */
  output: string;
  exitCode: number | null;
}

export interface ToolProfile {
  readonly name: ToolProfileName;
  /** The `tools` array of every request. */
  readonly tools: readonly OpenAiToolSchema[];
  /** Executables of the tool bundle the sandbox needs. */
  readonly executables: readonly ToolName[];
  /** Default of `parallel_tool_calls` (several calls in one reply are executed in order when true). */
  readonly parallelToolCalls: boolean;
  readonly systemTemplate: string;
  readonly instanceTemplate: string;
  /** Name of a tool whose call ends the episode without running anything (SWE-agent's `submit`). */
  readonly submitTool: string | undefined;
  /** A reply without tool calls ends the episode (veRL's tool agent loop) instead of being a format error. */
  readonly endsWithoutCall: boolean;
  /** The command line for one call, or the format error the model is shown. */
  toCommand(call: ToolCallInput, context: { workingDir: string }): ToolCommandResult;
  /** The tool message content for an executed command. */
  observation(command: ExecutedCommand): string;
  /** Whether this executed command submitted the episode (mini-swe-agent's sentinel). */
  isSubmission(command: ExecutedCommand): boolean;
}

const SUBMIT_TOOL: OpenAiToolSchema = {
  type: 'function',
  function: {
    name: 'submit',
    description: 'Submit the current changes of the repository as your solution and end the task. Takes no arguments.',
    parameters: { type: 'object', properties: {}, required: [] },
  },
};

function notAvailable(name: string): ToolCommandResult {
  return {
    ok: false,
    error: {
      code: 'TOOL_ERROR',
      message: `Your action could not be parsed properly: Command '${name}' not found in list of available commands..`,
    },
  };
}

/** Conversion restricted to the profile's own tools (the catalogue knows more names than any one profile offers). */
function restricted(names: readonly string[]): (call: ToolCallInput) => ToolCommandResult {
  return (call) => (names.includes(call.name) ? toolCallToCommand(call) : notAvailable(call.name));
}

const SWEAGENT: ToolProfile = {
  name: 'sweagent',
  tools: [toOpenAiToolSchema(BASH_TOOL), toOpenAiToolSchema(STR_REPLACE_EDITOR_TOOL), SUBMIT_TOOL],
  executables: ['str_replace_editor'],
  parallelToolCalls: false,
  systemTemplate: DEFAULT_TEMPLATES.sweagent.system,
  instanceTemplate: DEFAULT_TEMPLATES.sweagent.instance,
  submitTool: 'submit',
  endsWithoutCall: false,
  toCommand: restricted(['bash', 'str_replace_editor']),
  observation: ({ output }) => clipSweAgentObservation(output),
  isSubmission: () => false,
};

const MINI_BASH: ToolProfile = {
  name: 'mini_bash',
  tools: [toOpenAiToolSchema(BASH_TOOL)],
  executables: [],
  parallelToolCalls: true,
  systemTemplate: DEFAULT_TEMPLATES.mini_bash.system,
  instanceTemplate: DEFAULT_TEMPLATES.mini_bash.instance,
  submitTool: undefined,
  endsWithoutCall: false,
  toCommand: (call, { workingDir }) => {
    const converted = restricted(['bash'])(call);
    if (!converted.ok) return converted;
    // A fresh shell per command in the repository, as mini-swe-agent runs them: state does not carry over.
    return { ok: true, command: `cd ${shellQuote(workingDir)} && bash -c ${shellQuote(converted.command)}` };
  },
  observation: miniObservation,
  isSubmission: ({ output, exitCode }) =>
    exitCode === 0 && output.trimStart().split('\n', 1)[0]?.trim() === MINI_SUBMIT_SENTINEL,
};

const SEED: ToolProfile = {
  name: 'seed',
  tools: [toOpenAiToolSchema(EXECUTE_BASH_TOOL), toOpenAiToolSchema(STR_REPLACE_EDITOR_TOOL)],
  executables: ['execute_bash', 'str_replace_editor'],
  parallelToolCalls: false,
  systemTemplate: DEFAULT_TEMPLATES.seed.system,
  instanceTemplate: DEFAULT_TEMPLATES.seed.instance,
  submitTool: undefined,
  endsWithoutCall: true,
  toCommand: restricted(['execute_bash', 'str_replace_editor']),
  observation: ({ output }) => seedObservation(output),
  isSubmission: () => false,
};

export const TOOL_PROFILE_SPECS: Readonly<Record<ToolProfileName, ToolProfile>> = {
  sweagent: SWEAGENT,
  mini_bash: MINI_BASH,
  seed: SEED,
};

export function toolProfile(name: ToolProfileName): ToolProfile {
  return TOOL_PROFILE_SPECS[name];
}
