// Tool call → command line (tools spec §2.1): the spec's table, error observations, value rendering.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOL_BUNDLE_DIR, TOOL_INSTALL_DIR, TOOL_INSTALL_ROOT } from './bundle-paths.js';
import { pyRepr, pyStrip } from './python-text.js';
import { shellQuote } from './shell-quote.js';
import { OPENAI_TOOL_SCHEMAS, TOOL_BUNDLE_EXECUTABLES, TOOL_CALL_NAMES } from './tool-catalogue.js';
import { toolCallToCommand } from './tool-call-to-command.js';

function commandOf(name: string, args: Record<string, unknown> | string): string {
  const result = toolCallToCommand({ name, arguments: args });
  if (!result.ok) throw new Error(`expected a command, got: ${result.error.message}`);
  return result.command;
}

function errorOf(name: string, args: Record<string, unknown> | string): string {
  const result = toolCallToCommand({ name, arguments: args });
  if (result.ok) throw new Error(`expected an error, got: ${result.command}`);
  expect(result.error.code).toBe('TOOL_ERROR');
  return result.error.message;
}

describe('toolCallToCommand: the spec table', () => {
  it.each([
    ['str_replace_editor', { command: 'view', path: '/testbed' }, 'str_replace_editor view /testbed'],
    [
      'str_replace_editor',
      { command: 'str_replace', path: '/t/a.py', old_str: 'x = 1', new_str: 'x = 2' },
      "str_replace_editor str_replace /t/a.py   --old_str 'x = 1' --new_str 'x = 2'",
    ],
    [
      'str_replace_editor',
      { command: 'str_replace', path: '/t/a.py', old_str: 'a', new_str: '' },
      "str_replace_editor str_replace /t/a.py   --old_str a --new_str ''",
    ],
    [
      'str_replace_editor',
      { command: 'view', path: '/t/a.py', view_range: [1, 10] },
      'str_replace_editor view /t/a.py  --view_range 1 10',
    ],
    [
      'str_replace_editor',
      { command: 'insert', path: '/t/a.py', insert_line: 5, new_str: 'y = 3' },
      "str_replace_editor insert /t/a.py    --new_str 'y = 3' --insert_line 5",
    ],
    [
      'str_replace_editor',
      { command: 'create', path: '/t/b.py', file_text: "print('hi')\n" },
      `str_replace_editor create /t/b.py --file_text 'print('"'"'hi'"'"')\n'`,
    ],
    ['bash', { command: '  ls -la\n' }, 'ls -la'],
  ])('%s %j', (name, args, expected) => {
    expect(commandOf(name, args)).toBe(expected);
  });

  it('fills slots in signature order whatever the JSON key order; accepts the JSON string form', () => {
    const json = '{"new_str":"b","old_str":"a","path":"/x","command":"str_replace"}';
    expect(commandOf('str_replace_editor', json)).toBe('str_replace_editor str_replace /x   --old_str a --new_str b');
  });

  it('renders null as empty and numbers/booleans/lists Python-style', () => {
    expect(commandOf('str_replace_editor', { command: 'view', path: '/x', view_range: null })).toBe(
      'str_replace_editor view /x  --view_range',
    );
    expect(commandOf('str_replace_editor', { command: 'insert', path: '/x', insert_line: true, new_str: 'a' })).toBe(
      'str_replace_editor insert /x    --new_str a --insert_line True',
    );
    expect(commandOf('str_replace_editor', { command: 'view', path: '/x', view_range: [1, -1] })).toBe(
      'str_replace_editor view /x  --view_range 1 -1',
    );
    expect(commandOf('str_replace_editor', { command: 'create', path: '/x', file_text: ['a', 1] })).toBe(
      "str_replace_editor create /x --file_text ['a', 1]",
    );
  });

  it('passes a string view_range as one quoted argument (our editor parses it)', () => {
    expect(commandOf('str_replace_editor', { command: 'view', path: '/x', view_range: '[1, 10]' })).toBe(
      "str_replace_editor view /x  --view_range '[1, 10]'",
    );
  });
});

describe('toolCallToCommand: execute_bash', () => {
  it('is the bash tool under another name: raw command text, trimmed', () => {
    expect(commandOf('execute_bash', { command: '\n cd /testbed && export A=1 \n' })).toBe('cd /testbed && export A=1');
  });

  it("accepts R2E-Gym's cmd and ignores OpenHands' timeout / security_risk / is_input=false", () => {
    expect(commandOf('execute_bash', { cmd: 'ls' })).toBe('ls');
    expect(commandOf('execute_bash', { command: 'ls', timeout: 30, security_risk: 'LOW', is_input: 'false' })).toBe(
      'ls',
    );
  });

  it('rejects is_input=true, both command and cmd, and a missing command', () => {
    expect(errorOf('execute_bash', { command: 'C-c', is_input: 'true' })).toMatch(
      /^Your action could not be parsed properly: Sending input/,
    );
    expect(errorOf('execute_bash', { command: 'ls', cmd: 'ls' })).toMatch(/Unexpected argument\(s\): cmd\./);
    expect(errorOf('execute_bash', {})).toBe(
      'Your action could not be parsed properly: Required argument(s) missing: command.',
    );
  });
});

describe('toolCallToCommand: error observations (reference format-error template)', () => {
  it("unknown tool, keeping the reference's double full stop", () => {
    expect(errorOf('submit', {})).toBe(
      "Your action could not be parsed properly: Command 'submit' not found in list of available commands..",
    );
  });

  it('invalid JSON and non-object JSON', () => {
    expect(errorOf('bash', '{"command": ')).toBe(
      'Your action could not be parsed properly: Tool call arguments are not valid JSON.',
    );
    expect(errorOf('bash', '["ls"]')).toBe(
      'Your action could not be parsed properly: Tool call arguments are not a JSON object.',
    );
  });

  it('missing required arguments in declaration order, checked before unexpected ones', () => {
    expect(errorOf('str_replace_editor', { file_text: 'x', bogus: 1 })).toBe(
      'Your action could not be parsed properly: Required argument(s) missing: command, path.',
    );
  });

  it("unexpected arguments add the reference's second line", () => {
    expect(errorOf('str_replace_editor', { command: 'view', path: '/x', bogus: 1, other: 2 })).toBe(
      "Your action could not be parsed properly: Unexpected argument(s): bogus, other.\nMake sure your function call doesn't include any extra arguments that are not in the allowed arguments, and only use the allowed commands.",
    );
  });

  it('an argument object with an "ok" key is just an unexpected argument', () => {
    expect(errorOf('bash', { command: 'ls', ok: false })).toMatch(/Unexpected argument\(s\): ok\./);
  });
});

describe('Python helpers', () => {
  it('shellQuote is shlex.quote', () => {
    expect(shellQuote('')).toBe("''");
    expect(shellQuote('a-Z_0@%+=:,./')).toBe('a-Z_0@%+=:,./');
    expect(shellQuote('é')).toBe("'é'");
    expect(shellQuote("it's")).toBe(`'it'"'"'s'`);
  });

  it('pyStrip strips what str.strip() strips, not what String.trim() strips', () => {
    expect(pyStrip('\x1c\x85 a \u3000\n')).toBe('a');
    expect(pyStrip('\ufeffa\ufeff')).toBe('\ufeffa\ufeff');
  });

  it('pyRepr prints lists, dicts and strings like repr()', () => {
    expect(pyRepr([1, 'a', "it's", null, true, 1.5, { k: [2] }])).toBe(`[1, 'a', "it's", None, True, 1.5, {'k': [2]}]`);
    expect(pyRepr('tab\there\nand \\ \x00 \u2028')).toBe("'tab\\there\\nand \\\\ \\x00 \\u2028'");
    expect(pyRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pyRepr(1e-7)).toBe('1e-07');
  });
});

describe('catalogue', () => {
  it('has an OpenAI function schema per tool name, with required arguments', () => {
    expect(Object.keys(OPENAI_TOOL_SCHEMAS).sort()).toEqual([...TOOL_CALL_NAMES].sort());
    expect(OPENAI_TOOL_SCHEMAS.str_replace_editor.function.parameters.required).toEqual(['command', 'path']);
    expect(OPENAI_TOOL_SCHEMAS.str_replace_editor.function.parameters.properties.view_range).toMatchObject({
      type: 'array',
      items: { type: 'integer' },
    });
    expect(OPENAI_TOOL_SCHEMAS.execute_bash.function.parameters.required).toEqual(['command']);
  });
});

describe('bundle paths', () => {
  it('TOOL_BUNDLE_DIR holds an executable per bundled tool; TOOL_INSTALL_DIR is bin/ under the install root', () => {
    for (const name of TOOL_BUNDLE_EXECUTABLES) {
      expect(() => accessSync(join(TOOL_BUNDLE_DIR, 'bin', name), constants.X_OK)).not.toThrow();
    }
    expect(TOOL_INSTALL_DIR).toBe(`${TOOL_INSTALL_ROOT}/bin`);
  });
});

describe('toolCallToCommand: the plain bash call', () => {
  it('converts `{command}` exactly as the general path does (which a JSON-string argument takes)', () => {
    const command = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('', '  ', '\n ls \n', '<command>', '{{value}}', 'echo \'a\' "b"', '\u00a0x\u2028'),
    );
    fc.assert(
      fc.property(fc.constantFrom('bash', 'execute_bash'), command, (name, text) => {
        const general = toolCallToCommand({ name, arguments: JSON.stringify({ command: text }) });
        expect(toolCallToCommand({ name, arguments: { command: text } })).toStrictEqual(general);
        // Extra or other arguments are not the plain call: the general path decides them as before.
        expect(toolCallToCommand({ name, arguments: { command: text, timeout: 5 } })).toStrictEqual(
          toolCallToCommand({ name, arguments: JSON.stringify({ command: text, timeout: 5 }) }),
        );
      }),
      { numRuns: 500 },
    );
    expect(commandOf('bash', { command: 1 })).toBe('1');
  });
});
