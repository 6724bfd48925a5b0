/**
 * The tools a replayed tool call may name, described the way SWE-agent describes a tool bundle
 * (signature, arguments with an `argument_format` template) so command lines are built by the same rules
 * (tools spec §2.1), plus the OpenAI function schema of each.
 */

/** Tool names accepted in tool calls. `bash` (SWE-agent) and `execute_bash` (OpenHands, R2E-Gym, rLLM) are aliases. */
export const TOOL_CALL_NAMES = ['bash', 'execute_bash', 'str_replace_editor'] as const;
export type ToolCallName = (typeof TOOL_CALL_NAMES)[number];

/** Executables shipped in the tool bundle (`<bundle>/bin/<name>`), i.e. what must be on PATH in a sandbox. */
export const TOOL_BUNDLE_EXECUTABLES = ['execute_bash', 'str_replace_editor'] as const;

export interface ToolArgumentSpec {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'array';
  readonly description: string;
  readonly required: boolean;
  readonly enum?: readonly string[];
  readonly items?: { readonly type: 'integer' };
  /** SWE-agent `argument_format` (a Jinja template). Only `{{value}}` and `{{value|join('<sep>')}}` occur. */
  readonly argumentFormat: string;
}

export interface ToolSpec {
  readonly name: ToolCallName;
  readonly description: string;
  /** `<arg>` / `[<arg>]` slots are filled in this order, whatever the order of the call's JSON object. */
  readonly signature: string;
  readonly arguments: readonly ToolArgumentSpec[];
  /** SWE-agent shell-quotes string values, except for the bash tool whose command text is inserted raw. */
  readonly quoteStrings: boolean;
}

const VALUE = '{{value}}';

const BASH_COMMAND_ARGUMENT: ToolArgumentSpec = {
  name: 'command',
  type: 'string',
  description: 'The bash command to execute.',
  required: true,
  argumentFormat: VALUE,
};

const BASH_DESCRIPTION =
  "Run a command in the sandbox's persistent bash session (working directory and exported variables carry over " +
  'between calls). Output is returned; interactive programs are not supported.';

export const BASH_TOOL: ToolSpec = {
  name: 'bash',
  description: BASH_DESCRIPTION,
  signature: '<command>',
  arguments: [BASH_COMMAND_ARGUMENT],
  quoteStrings: false,
};

export const EXECUTE_BASH_TOOL: ToolSpec = { ...BASH_TOOL, name: 'execute_bash' };

export const STR_REPLACE_EDITOR_TOOL: ToolSpec = {
  name: 'str_replace_editor',
  description: [
    'View, create and edit files.',
    '* `view` on a file prints it with line numbers (like `cat -n`); on a directory it lists non-hidden entries up to 2 levels deep.',
    '* `create` writes a new file; it refuses to overwrite an existing path.',
    '* `str_replace` replaces `old_str`, which must occur exactly once in the file, by `new_str`.',
    '* `insert` inserts `new_str` after line `insert_line` (0 inserts at the top).',
    '* `undo_edit` reverts the last edit made to the file at `path`.',
    'Long outputs are clipped and marked with `<response clipped>`.',
  ].join('\n'),
  signature: 'str_replace_editor <command> <path> [<file_text>] [<view_range>] [<old_str>] [<new_str>] [<insert_line>]',
  arguments: [
    {
      name: 'command',
      type: 'string',
      description: 'The command to run: `view`, `create`, `str_replace`, `insert` or `undo_edit`.',
      required: true,
      enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'],
      argumentFormat: VALUE,
    },
    {
      name: 'path',
      type: 'string',
      description: 'Absolute path of the file or directory, e.g. `/testbed/file.py` or `/testbed`.',
      required: true,
      argumentFormat: VALUE,
    },
    {
      name: 'file_text',
      type: 'string',
      description: 'Content of the file to create (required by `create`).',
      required: false,
      argumentFormat: '--file_text {{value}}',
    },
    {
      name: 'old_str',
      type: 'string',
      description: 'Text to replace (required by `str_replace`); must match exactly, whitespace included.',
      required: false,
      argumentFormat: '--old_str {{value}}',
    },
    {
      name: 'new_str',
      type: 'string',
      description: 'Replacement text for `str_replace` (empty when omitted); text to insert for `insert` (required).',
      required: false,
      argumentFormat: '--new_str {{value}}',
    },
    {
      name: 'insert_line',
      type: 'integer',
      description: 'Line after which `new_str` is inserted (required by `insert`).',
      required: false,
      argumentFormat: '--insert_line {{value}}',
    },
    {
      name: 'view_range',
      type: 'array',
      items: { type: 'integer' },
      description:
        'For `view` of a file: first and last line to show, 1-based and inclusive; `[start, -1]` shows to the end.',
      required: false,
      argumentFormat: "--view_range {{value|join(' ')}}",
    },
  ],
  quoteStrings: true,
};

export const TOOL_SPECS: Readonly<Record<ToolCallName, ToolSpec>> = {
  bash: BASH_TOOL,
  execute_bash: EXECUTE_BASH_TOOL,
  str_replace_editor: STR_REPLACE_EDITOR_TOOL,
};

export function isToolCallName(name: string): name is ToolCallName {
  return Object.hasOwn(TOOL_SPECS, name);
}

export interface OpenAiToolSchema {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: {
      readonly type: 'object';
      readonly properties: Record<
        string,
        { type: string; description: string; enum?: readonly string[]; items?: { type: string } }
      >;
      readonly required: readonly string[];
    };
  };
}

/** The OpenAI `tools` entry of a tool, built the way SWE-agent's `Command.get_function_calling_tool` does. */
export function toOpenAiToolSchema(spec: ToolSpec): OpenAiToolSchema {
  const properties: OpenAiToolSchema['function']['parameters']['properties'] = {};
  for (const argument of spec.arguments) {
    properties[argument.name] = {
      type: argument.type,
      description: argument.description,
      ...(argument.enum ? { enum: argument.enum } : {}),
      ...(argument.items ? { items: argument.items } : {}),
    };
  }
  return {
    type: 'function',
    function: {
      name: spec.name,
      description: spec.description,
      parameters: {
        type: 'object',
        properties,
        required: spec.arguments.filter((argument) => argument.required).map((argument) => argument.name),
      },
    },
  };
}

export const OPENAI_TOOL_SCHEMAS: Readonly<Record<ToolCallName, OpenAiToolSchema>> = {
  bash: toOpenAiToolSchema(BASH_TOOL),
  execute_bash: toOpenAiToolSchema(EXECUTE_BASH_TOOL),
  str_replace_editor: toOpenAiToolSchema(STR_REPLACE_EDITOR_TOOL),
};
