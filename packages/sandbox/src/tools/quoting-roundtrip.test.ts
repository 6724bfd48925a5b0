// Hostile strings survive tool call → command line → real bash → real tool, byte for byte.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellQuote } from './shell-quote.js';
import { toolCallToCommand } from './tool-call-to-command.js';
import { makeScratch, runShell } from '@rollout-fleet/test-kit/tool-bundle-harness';
import type { Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';

const HOSTILE: readonly string[] = [
  '',
  "'",
  '"',
  `it's "quoted" 'twice'`,
  "''''",
  'line one\nline two\n',
  '\n\n',
  'trailing space ',
  '$(echo pwned) ${HOME} $HOME',
  '`echo pwned`',
  'back\\slash \\n \\\\ \\',
  'héllo wörld ✓ 🎉 日本語',
  '-n',
  '-e \\n',
  '--',
  '--foo=bar',
  '-',
  '* ? [a-z] ~ ~root',
  '!! !$ history',
  'a; b && c || d | e & f',
  '< > >> 2>&1',
  '# comment',
  'tab\there\r\ncrlf',
  "EOF\nheredoc <<'EOF'\nEOF",
  '{a,b} $((1+1))',
];

let scratch: Scratch;

beforeAll(() => {
  scratch = makeScratch();
});
afterAll(() => scratch.cleanup());

function mustCommand(name: string, args: Record<string, unknown>): string {
  const result = toolCallToCommand({ name, arguments: args });
  if (!result.ok) throw new Error(result.error.message);
  return result.command;
}

describe('quoting round trip', () => {
  it('str_replace_editor create --file_text <hostile> writes exactly the bytes of the string', () => {
    HOSTILE.forEach((text, index) => {
      const path = join(scratch.dir, `created-${index}.txt`);
      const command = mustCommand('str_replace_editor', { command: 'create', path, file_text: text });
      const result = runShell(command, { scratch });
      expect({ index, code: result.code, stderr: result.stderr }).toEqual({ index, code: 0, stderr: '' });
      expect(readFileSync(path)).toEqual(Buffer.from(text, 'utf8'));
    });
  });

  it('str_replace with hostile old_str/new_str through the JSON string form', () => {
    const path = join(scratch.dir, 'replace.txt');
    const seed = mustCommand('str_replace_editor', { command: 'create', path, file_text: 'START' });
    expect(runShell(seed, { scratch }).code).toBe(0);
    let current = 'START';
    for (const text of HOSTILE.filter((candidate) => candidate !== '' && !candidate.includes('\t'))) {
      const command = mustCommand('str_replace_editor', {
        ...(JSON.parse(
          JSON.stringify({ command: 'str_replace', path, old_str: current, new_str: `<${text}>` }),
        ) as Record<string, unknown>),
      });
      expect(runShell(command, { scratch }).code).toBe(0);
      current = `<${text}>`;
      // Line endings are normalised by the editor's read (universal newlines), so compare after the same step.
      expect(readFileSync(path, 'utf8')).toBe(current.replaceAll('\r\n', '\n'));
      current = current.replaceAll('\r\n', '\n');
    }
  });

  it('execute_bash: printf %s <hostile> prints the string, run raw and through the execute_bash executable', () => {
    for (const text of HOSTILE) {
      const script = `printf %s ${shellQuote(text)}`;
      const raw = mustCommand('execute_bash', { command: script });
      expect(raw).toBe(script);
      expect(runShell(raw, { scratch }).stdout).toEqual(Buffer.from(text, 'utf8'));

      const viaTool = `execute_bash ${shellQuote(script)}`;
      const result = runShell(viaTool, { scratch });
      expect({ text, code: result.code }).toEqual({ text, code: 0 });
      expect(result.stdout).toEqual(Buffer.from(text, 'utf8'));
    }
  });
});
