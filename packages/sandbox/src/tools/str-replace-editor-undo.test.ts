// undo_edit works across invocations (our deliberate difference from upstream, tools spec §3.9).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScratch, runTool, specBlock } from '@rollout-fleet/test-kit/tool-bundle-harness';
import type { Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';

let scratch: Scratch;

beforeAll(() => {
  scratch = makeScratch();
});
afterAll(() => scratch.cleanup());

function editor(args: string[], env?: Record<string, string>) {
  return runTool('str_replace_editor', args, { scratch, env });
}

describe('undo_edit', () => {
  it('pops one edit per call, restoring exact bytes (tabs, CRLF), and create starts a fresh history', () => {
    const path = join(scratch.dir, 'undo.txt');
    expect(editor(['create', path, '--file_text', 'first\r\n\tsecond\r\n']).code).toBe(0);
    expect(editor(['str_replace', path, '--old_str', 'first', '--new_str', 'FIRST']).code).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('FIRST\n        second\n');
    expect(editor(['insert', path, '--insert_line', '0', '--new_str', 'top']).code).toBe(0);
    expect(readFileSync(path, 'utf8')).toBe('top\nFIRST\n        second\n');

    const firstUndo = editor(['undo_edit', path]);
    expect(firstUndo).toEqual({
      code: 0,
      stdout: `Last edit to ${path} undone successfully. ${specBlock('FIRST\n        second\n', path)}\n`,
      stderr: '',
    });
    expect(readFileSync(path, 'utf8')).toBe('FIRST\n        second\n');

    const secondUndo = editor(['undo_edit', path]);
    expect(secondUndo.code).toBe(0);
    // The bytes written by `create`, CRLF and tab included; the message shows them as read_text would.
    expect(readFileSync(path, 'utf8')).toBe('first\r\n\tsecond\r\n');
    expect(secondUndo.stdout).toBe(
      `Last edit to ${path} undone successfully. ${specBlock('first\n\tsecond\n', path)}\n`,
    );

    expect(editor(['undo_edit', path])).toEqual({
      code: 18,
      stdout: `No edit history found for ${path}.\n`,
      stderr: '',
    });
    expect(existsSync(join(scratch.home, '.rollout-fleet', 'editor-history.json'))).toBe(true);
  });

  it('keeps histories per file and honours ROLLOUT_FLEET_EDITOR_HISTORY', () => {
    const state = join(scratch.dir, 'custom-history.json');
    const env = { ROLLOUT_FLEET_EDITOR_HISTORY: state };
    const a = join(scratch.dir, 'a.txt');
    const b = join(scratch.dir, 'b.txt');
    writeFileSync(a, 'a0');
    writeFileSync(b, 'b0');
    editor(['str_replace', a, '--old_str', 'a0', '--new_str', 'a1'], env);
    editor(['str_replace', b, '--old_str', 'b0', '--new_str', 'b1'], env);
    expect(editor(['undo_edit', a], env).code).toBe(0);
    expect(readFileSync(a, 'utf8')).toBe('a0');
    expect(readFileSync(b, 'utf8')).toBe('b1');
    expect(Object.keys((JSON.parse(readFileSync(state, 'utf8')) as { files: Record<string, unknown> }).files)).toEqual([
      b,
    ]);
    // The default location knows nothing about these edits.
    expect(editor(['undo_edit', b]).code).toBe(18);
  });

  it('failed edits push nothing', () => {
    const path = join(scratch.dir, 'unchanged.txt');
    writeFileSync(path, 'same');
    expect(editor(['str_replace', path, '--old_str', 'nope', '--new_str', 'x']).code).toBe(15);
    expect(editor(['insert', path, '--insert_line', '9', '--new_str', 'x']).code).toBe(17);
    expect(editor(['undo_edit', path]).code).toBe(18);
  });
});
