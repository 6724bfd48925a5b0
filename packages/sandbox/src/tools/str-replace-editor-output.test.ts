// Success outputs of str_replace_editor, byte for byte (tools spec §3.4–3.8); expectations are written from the
// spec's rules and worked examples (specBlock implements §3.4 independently of the Python code).
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIPPED_NOTE, makeScratch, runTool, specBlock } from '@rollout-fleet/test-kit/tool-bundle-harness';
import type { Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';

let scratch: Scratch;
let D: string;

beforeAll(() => {
  scratch = makeScratch();
  D = scratch.dir;
});
afterAll(() => scratch.cleanup());

function editor(...args: string[]) {
  return runTool('str_replace_editor', args, { scratch });
}

function numbered(count: number, prefix = 'line'): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${index + 1}`);
}

function file(name: string, content: string | Buffer): string {
  const path = join(D, name);
  writeFileSync(path, content);
  return path;
}

const EDITED_TAIL = 'Review the changes and make sure they are as expected. Edit the file again if necessary.';
const INSERTED_TAIL =
  'Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.';

describe('view of a file (spec §3.4, §3.5)', () => {
  it('numbers every "\\n"-separated line, so a trailing newline adds an empty line, and stdout ends in \\n\\n', () => {
    const lines = numbered(10);
    const path = file('ten.txt', `${lines.join('\n')}\n`);
    const result = editor('view', path);
    const expected =
      `Here's the result of running \`cat -n\` on ${path}:\n` +
      lines.map((line, index) => `${String(index + 1).padStart(6)}\t${line}`).join('\n') +
      '\n    11\t\n\n';
    expect(result).toEqual({ code: 0, stdout: expected, stderr: '' });
  });

  it('view_range shows lines a..b numbered from a; -1 means the last line', () => {
    const path = file('range.txt', `${numbered(10).join('\n')}\n`);
    expect(editor('view', path, '--view_range', '2', '4').stdout).toBe(
      `Here's the result of running \`cat -n\` on ${path}:\n     2\tline2\n     3\tline3\n     4\tline4\n\n`,
    );
    expect(editor('view', path, '--view_range', '9', '-1').stdout).toBe(
      `Here's the result of running \`cat -n\` on ${path}:\n     9\tline9\n    10\tline10\n    11\t\n\n`,
    );
  });

  it('expands tabs to 8-column stops', () => {
    const path = file('tabs.txt', 'a\tb\n\tindented\nabcdefgh\tx');
    expect(editor('view', path).stdout).toBe(
      `Here's the result of running \`cat -n\` on ${path}:\n     1\ta       b\n     2\t        indented\n     3\tabcdefgh        x\n\n`,
    );
  });

  it('clips text above 16 000 characters before numbering, the note on the last numbered line', () => {
    const path = file('long.txt', `${'x'.repeat(15_990)}\n${'y'.repeat(100)}`);
    const stdout = editor('view', path).stdout;
    expect(stdout).toBe(
      `Here's the result of running \`cat -n\` on ${path}:\n     1\t${'x'.repeat(15_990)}\n     2\t${'y'.repeat(9)}${CLIPPED_NOTE}\n\n`,
    );
  });

  it('line numbers wider than six digits just grow', () => {
    const path = file('million.txt', '\n'.repeat(1_000_000));
    expect(editor('view', path, '--view_range', '999999', '-1').stdout).toBe(
      `Here's the result of running \`cat -n\` on ${path}:\n999999\t\n1000000\t\n1000001\t\n\n`,
    );
  });

  it('decodes Latin-1 files and reads CRLF as LF, like pathlib read_text', () => {
    const path = file('latin.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a, 0x78]));
    expect(editor('view', path).stdout).toBe(specBlock('café\nx', path) + '\n');
  });
});

describe('view of a directory (spec §3.5)', () => {
  it('lists the root first, then entries up to depth 2, hidden ones excluded; output ends in three newlines', () => {
    const root = join(D, 'tree-one');
    mkdirSync(join(root, '.git'), { recursive: true });
    writeFileSync(join(root, '.hidden'), 'h');
    writeFileSync(join(root, 'only.txt'), 'x');
    expect(editor('view', root)).toEqual({
      code: 0,
      stdout: `Here's the files and directories up to 2 levels deep in ${root}, excluding hidden items:\n${root}\n${root}/only.txt\n\n\n`,
      stderr: '',
    });
  });

  it('stops at depth 2 (filesystem order, so compared as a set after the fixed root line)', () => {
    const root = join(D, 'tree-deep');
    mkdirSync(join(root, 'a', 'b', 'c'), { recursive: true });
    writeFileSync(join(root, 'a', 'b', 'c', 'deep.txt'), 'x');
    writeFileSync(join(root, 'top.txt'), 'x');
    const stdout = editor('view', `${root}/`).stdout;
    const header = `Here's the files and directories up to 2 levels deep in ${root}, excluding hidden items:\n${root}\n`;
    expect(stdout.startsWith(header)).toBe(true);
    expect(stdout.endsWith('\n\n\n')).toBe(true);
    const entries = stdout.slice(header.length, -3).split('\n').sort();
    expect(entries).toEqual([`${root}/a`, `${root}/a/b`, `${root}/top.txt`]);
  });

  it('prints nothing (exit 0) when find writes to stderr', () => {
    const shimDir = join(D, 'find-shim');
    mkdirSync(shimDir);
    const shim = join(shimDir, 'find');
    writeFileSync(shim, '#!/bin/sh\necho "$1/readable"\necho "find: permission denied" >&2\n');
    chmodSync(shim, 0o755);
    const result = runTool('str_replace_editor', ['view', D], { scratch, env: { PATH: `${shimDir}:/usr/bin:/bin` } });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('str_replace snippets (spec §3.7)', () => {
  it('matches the worked example: 20 lines, line11 → "X\\nY" shows lines 6–15', () => {
    const path = file('a.txt', numbered(20).join('\n'));
    const result = editor('str_replace', path, '--old_str', 'line11', '--new_str', 'X\nY');
    expect(result).toEqual({
      code: 0,
      stdout:
        `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n` +
        '     6\tline6\n     7\tline7\n     8\tline8\n     9\tline9\n    10\tline10\n    11\tX\n    12\tY\n' +
        '    13\tline12\n    14\tline13\n    15\tline14\n' +
        `${EDITED_TAIL}\n`,
      stderr: '',
    });
    expect(readFileSync(path, 'utf8')).toBe([...numbered(10), 'X', 'Y', ...numbered(20).slice(11)].join('\n'));
  });

  it('clips the window at the top and at the last line (splitlines count: a trailing newline adds none)', () => {
    const top = file('top.txt', `${numbered(10).join('\n')}\n`);
    expect(editor('str_replace', top, '--old_str', 'line2', '--new_str', 'two').stdout).toBe(
      `The file ${top} has been edited. ` +
        specBlock(['line1', 'two', 'line3', 'line4', 'line5'].join('\n'), `a snippet of ${top}`, 1) +
        `${EDITED_TAIL}\n`,
    );
    const bottom = file('bottom.txt', `${numbered(20).join('\n')}\n`);
    expect(editor('str_replace', bottom, '--old_str', 'line20', '--new_str', 'last').stdout).toBe(
      `The file ${bottom} has been edited. ` +
        specBlock([...numbered(19).slice(14), 'last'].join('\n'), `a snippet of ${bottom}`, 15) +
        `${EDITED_TAIL}\n`,
    );
  });

  it('writes the whole file back tab-expanded; a missing new_str deletes', () => {
    const path = file('tabbed.txt', 'a\tb\nc\nd');
    const result = editor('str_replace', path, '--old_str', 'c\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `The file ${path} has been edited. ` + specBlock('a       b\nd', `a snippet of ${path}`, 1) + `${EDITED_TAIL}\n`,
    );
    expect(readFileSync(path, 'utf8')).toBe('a       b\nd');
  });

  it('an empty snippet range prints an empty snippet instead of crashing (spec: correct behaviour)', () => {
    const path = file('one-line.txt', 'abc');
    const result = editor('str_replace', path, '--old_str', 'abc', '--new_str', '');
    expect(result).toEqual({
      code: 0,
      stdout: `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of ${path}:\n     1\t\n${EDITED_TAIL}\n`,
      stderr: '',
    });
    expect(readFileSync(path, 'utf8')).toBe('');
  });
});

describe('insert snippets (spec §3.8)', () => {
  it('matches the spec example: a\\nb\\n, insert_line 3, NEW', () => {
    const path = file('ab.txt', 'a\nb\n');
    expect(editor('insert', path, '--insert_line', '3', '--new_str', 'NEW')).toEqual({
      code: 0,
      stdout:
        `The file ${path} has been edited. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
        `     1\ta\n     2\tb\n     3\t\n     4\tNEW\n${INSERTED_TAIL}\n`,
      stderr: '',
    });
    expect(readFileSync(path, 'utf8')).toBe('a\nb\n\nNEW');
  });

  it('shows up to 4 lines before and after, numbered from insert_line − 3', () => {
    const lines = numbered(20);
    const path = file('mid.txt', lines.join('\n'));
    const result = editor('insert', path, '--insert_line', '10', '--new_str', 'n1\n\tn2');
    expect(result.stdout).toBe(
      `The file ${path} has been edited. ` +
        specBlock(
          [...lines.slice(6, 10), 'n1', '        n2', ...lines.slice(10, 14)].join('\n'),
          'a snippet of the edited file',
          7,
        ) +
        `${INSERTED_TAIL}\n`,
    );
    expect(readFileSync(path, 'utf8')).toBe([...lines.slice(0, 10), 'n1', '        n2', ...lines.slice(10)].join('\n'));
  });

  it('insert_line 0 inserts at the top', () => {
    const path = file('zero.txt', 'x\ny');
    expect(editor('insert', path, '--insert_line', '0', '--new_str', 'top').stdout).toBe(
      `The file ${path} has been edited. ` +
        specBlock('top\nx\ny', 'a snippet of the edited file', 1) +
        `${INSERTED_TAIL}\n`,
    );
  });
});

describe('create (spec §3.6)', () => {
  it('writes file_text verbatim, tabs and all', () => {
    const path = join(D, 'created.py');
    expect(editor('create', path, '--file_text', 'def f():\n\treturn 1\n')).toEqual({
      code: 0,
      stdout: `File created successfully at: ${path}\n`,
      stderr: '',
    });
    expect(readFileSync(path, 'utf8')).toBe('def f():\n\treturn 1\n');
  });
});

describe('argument forms (spec §2.2 recommendation)', () => {
  it('positional path and --path give identical results; view_range as two args or one', () => {
    const path = file('forms.txt', numbered(6).join('\n'));
    const reference = editor('view', path, '--view_range', '2', '3');
    expect(reference.stdout).toBe(specBlock('line2\nline3', path, 2) + '\n');
    for (const args of [
      ['view', '--path', path, '--view_range', '2', '3'],
      ['view', `--path=${path}`, '--view_range', '[2, 3]'],
      ['view', path, '--view_range', '2,3'],
      ['view', path, '--view_range', '2 3'],
      ['view', path, '--view_range=(2, 3)'],
      ['--view_range', '2', '3', 'view', path],
      ['view', '--pa', path, '--view', '2', '3'],
    ]) {
      expect(editor(...args)).toEqual(reference);
    }
  });

  it('edits through --path behave like the positional form, values may start with dashes', () => {
    const path = file('dash.txt', 'alpha\nbeta');
    const result = editor('str_replace', '--path', path, '--old_str', 'beta', '--new_str', '--not-an-option');
    expect(result.stdout).toBe(
      `The file ${path} has been edited. ` +
        specBlock('alpha\n--not-an-option', `a snippet of ${path}`, 1) +
        `${EDITED_TAIL}\n`,
    );
    const errors = editor('insert', '--path', path, '--insert_line', '0', '--new_str', '-x');
    expect(errors.code).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('-x\nalpha\n--not-an-option');
  });

  it('an empty template slot (null argument) followed by another option is a usage error, as with argparse', () => {
    const path = file('slot.txt', 'a');
    const result = editor('str_replace', path, '--old_str', '--new_str', 'x');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('argument --old_str: expected one argument');
    expect(readFileSync(path, 'utf8')).toBe('a');
  });
});
