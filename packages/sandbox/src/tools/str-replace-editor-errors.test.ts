// Every row of the messages / exit codes table (tools spec §3.3) and the validation order (§3.2).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScratch, runPython, runTool } from '@rollout-fleet/test-kit/tool-bundle-harness';
import type { Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';

let scratch: Scratch;
let D: string;
let five: string;

beforeAll(() => {
  scratch = makeScratch();
  D = scratch.dir;
  five = join(D, 'five.txt');
  // Five lines as the editor counts them (split on "\n"), matching the spec's `[1, 5]` examples.
  writeFileSync(five, 'a\nb\nc\nd\ne');
});
afterAll(() => scratch.cleanup());

function editor(...args: string[]) {
  return runTool('str_replace_editor', args, { scratch });
}

/** stdout carries the one message plus print()'s newline; nothing on stderr. */
function expectMessage(result: ReturnType<typeof editor>, code: number, message: string): void {
  expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
    code,
    stdout: `${message}\n`,
    stderr: '',
  });
}

describe('str_replace_editor messages and exit codes (spec §3.3)', () => {
  it('1: create without file_text', () => {
    expectMessage(editor('create', join(D, 'new.txt')), 1, 'Parameter `file_text` is required for command: create');
  });

  it('2: str_replace without old_str', () => {
    expectMessage(
      editor('str_replace', five, '--new_str', 'x'),
      2,
      'Parameter `old_str` is required for command: str_replace',
    );
  });

  it('2: usage errors go to stderr with exit 2 (wrong view_range count, non-integer, missing positional)', () => {
    for (const args of [
      ['view', five, '--view_range', '1'],
      ['insert', five, '--insert_line', 'x', '--new_str', 'y'],
      ['view'],
      ['view', five, 'extra'],
    ]) {
      const result = editor(...args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^usage: str_replace_editor .*\nstr_replace_editor: error: .+\n$/s);
    }
  });

  it('3 and 4: insert without insert_line, then without new_str', () => {
    expectMessage(
      editor('insert', five, '--new_str', 'x'),
      3,
      'Parameter `insert_line` is required for command: insert',
    );
    expectMessage(
      editor('insert', five, '--insert_line', '1'),
      4,
      'Parameter `new_str` is required for command: insert',
    );
  });

  it('5: unknown command on an existing path; 7 when the path is missing (validation order)', () => {
    expectMessage(
      editor('frobnicate', five),
      5,
      'Unrecognized command frobnicate. The allowed commands for the str_replace_editor tool are: "view", "create", "str_replace", "insert", "undo_edit"',
    );
    expectMessage(
      editor('frobnicate', join(D, 'missing')),
      7,
      `The path ${D}/missing does not exist. Please provide a valid path.`,
    );
  });

  it('6: relative path, with the normalised suggestion', () => {
    expectMessage(
      editor('view', './five.txt'),
      6,
      `The path five.txt is not an absolute path, it should start with \`/\`. Maybe you meant ${D}/five.txt?`,
    );
  });

  it('7: missing path, printed pathlib-normalised', () => {
    expectMessage(
      editor('view', `${D}//nope/./x.txt/`),
      7,
      `The path ${D}/nope/x.txt does not exist. Please provide a valid path.`,
    );
  });

  it('8: create on an existing path', () => {
    expectMessage(
      editor('create', five, '--file_text', 'x'),
      8,
      `File already exists at: ${five}. Cannot overwrite files using command \`create\`.`,
    );
  });

  it('9: a non-view command on a directory (trailing slash normalised away)', () => {
    expectMessage(
      editor('str_replace', `${D}/`, '--old_str', 'a'),
      9,
      `The path ${D} is a directory and only the \`view\` command can be used on directories`,
    );
  });

  it('10: view_range on a directory', () => {
    expectMessage(
      editor('view', D, '--view_range', '1', '2'),
      10,
      'The `view_range` parameter is not allowed when `path` points to a directory.',
    );
  });

  it('11: a one-argument view_range that is not two integers', () => {
    for (const range of ['[1]', 'a,b', '[1, 2, 3]', '[]']) {
      expectMessage(
        editor('view', five, '--view_range', range),
        11,
        'Invalid `view_range`. It should be a list of two integers.',
      );
    }
  });

  it('12, 13, 14: view_range bounds, with the spec examples', () => {
    expectMessage(
      editor('view', five, '--view_range', '0', '3'),
      12,
      'Invalid `view_range`: [0, 3]. Its first element `0` should be within the range of lines of the file: [1, 5]',
    );
    expectMessage(
      editor('view', five, '--view_range', '2', '99'),
      13,
      'Invalid `view_range`: [2, 99]. Its second element `99` should be smaller than the number of lines in the file: `5`',
    );
    expectMessage(
      editor('view', five, '--view_range', '3', '2'),
      14,
      'Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`',
    );
  });

  it('15: old_str not found', () => {
    expectMessage(
      editor('str_replace', five, '--old_str', 'zzz', '--new_str', 'y'),
      15,
      `No replacement was performed, old_str \`zzz\` did not appear verbatim in ${five}.`,
    );
  });

  it('16: several occurrences, listing the lines that contain old_str entirely', () => {
    const file = join(D, 'multi.txt');
    writeFileSync(file, 'x1\nb\nc\nx2');
    expectMessage(
      editor('str_replace', file, '--old_str', 'x', '--new_str', 'y'),
      16,
      'No replacement was performed. Multiple occurrences of old_str `x` in lines [1, 4]. Please ensure it is unique',
    );
    const lines = join(D, 'multiline.txt');
    writeFileSync(lines, 'a\nb\na\nb\n');
    expectMessage(
      editor('str_replace', lines, '--old_str', 'a\nb', '--new_str', 'y'),
      16,
      'No replacement was performed. Multiple occurrences of old_str `a\nb` in lines []. Please ensure it is unique',
    );
  });

  it('161: old_str equal to new_str, printed tab-expanded', () => {
    const file = join(D, 'tabs.txt');
    writeFileSync(file, 'x\ty\n');
    expectMessage(
      editor('str_replace', file, '--old_str', 'x\ty', '--new_str', 'x\ty'),
      161,
      'No replacement was performed, old_str `x       y` is the same as new_str `x       y`.',
    );
    expect(readFileSync(file, 'utf8')).toBe('x\ty\n');
  });

  it('17: insert_line outside [0, N]', () => {
    expectMessage(
      editor('insert', five, '--insert_line', '6', '--new_str', 'q'),
      17,
      'Invalid `insert_line` parameter: 6. It should be within the range of lines of the file: [0, 5]',
    );
    expectMessage(
      editor('insert', five, '--insert_line', '-1', '--new_str', 'q'),
      17,
      'Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 5]',
    );
  });

  it('18: undo_edit without history', () => {
    expectMessage(editor('undo_edit', five), 18, `No edit history found for ${five}.`);
  });

  it('19: undecodable file (Latin-1 always decodes, so the encoding list is narrowed in-process)', () => {
    const file = join(D, 'binary.bin');
    writeFileSync(file, Buffer.from([0xff]));
    const code = [
      'from rollout_fleet_tools import editor',
      "editor.READ_ENCODINGS[:] = [('ascii', None)]",
      `editor.main(['view', ${JSON.stringify(file)}])`,
    ].join('\n');
    const result = runPython(code, { scratch });
    expectMessage(
      result,
      19,
      `Ran into UnicodeDecodeError 'ascii' codec can't decode byte 0xff in position 0: ordinal not in range(128) while trying to read ${file}`,
    );
  });

  it('20: write failure (the parent "directory" is a regular file)', () => {
    const target = `${five}/inner.txt`;
    expectMessage(
      editor('create', target, '--file_text', 'x'),
      20,
      `Ran into [Errno 20] Not a directory: '${target}' while trying to write to ${target}`,
    );
  });

  it('21: create below a missing directory', () => {
    expectMessage(
      editor('create', join(D, 'nodir', 'x.txt'), '--file_text', 'x'),
      21,
      `The parent directory ${D}/nodir does not exist. Please create it first.`,
    );
  });

  it('create on a missing path is not reported as 7, and a directory target is 8', () => {
    mkdirSync(join(D, 'sub'));
    expectMessage(
      editor('create', join(D, 'sub'), '--file_text', 'x'),
      8,
      `File already exists at: ${D}/sub. Cannot overwrite files using command \`create\`.`,
    );
    expectMessage(
      editor('create', join(D, 'sub', 'ok.txt'), '--file_text', 'x'),
      0,
      `File created successfully at: ${D}/sub/ok.txt`,
    );
  });
});
