// SWE-agent 0.x windowed tools (the shell functions of config/commands/*.sh), byte for byte. Expectations are
// written from windowed-tools.md §5–§7: centre C, constrain C = max(min(C, T - floor(W/2)), floor(W/2)), shown lines
// max(1, H-W+1)..min(H, T) with H = floor(max(C + W/2, W/2)), above floor(max(0, C - W/2)), below jq-round(max(0,
// T - C - W/2)); open/goto centre n + W/2 - floor(W/6). WINDOW=10, OVERLAP=2.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandNeed, describeWith } from '@rollout-fleet/test-kit/needs';
import { makeScratch, runSweAgent, type Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';
import type { SweAgentBundle } from '@rollout-fleet/shared';
import { guardMultilineAction, sweAgentActionCommand } from './swe-agent-actions.js';

const BUNDLES: SweAgentBundle[] = ['windowed', 'search', 'edit_linting', 'submit'];
let scratch: Scratch;
let F: string;

beforeEach(() => {
  scratch = makeScratch();
  F = join(scratch.dir, 'f.txt');
  writeFileSync(F, `${numbered(1, 25).join('\n')}\n`);
});
afterEach(() => scratch.cleanup());

function numbered(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `l${from + i}`);
}

function shown(from: number, to: number): string {
  return numbered(from, to)
    .map((line, i) => `${from + i}:${line}`)
    .join('\n');
}

function run(command: string, version = '0.7', window = 10, env: Record<string, string> = {}) {
  return runSweAgent(command, { scratch, version, bundles: BUNDLES, window, env });
}

describe('window (0.x)', () => {
  it('open: centre W/2, the realpath in the header, lines below', () => {
    expect(run('open f.txt')).toEqual({
      code: 0,
      output: `[File: ${F} (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`,
    });
  });

  it('goto n centres at n + W/2 - floor(W/6); the last window shows the last line', () => {
    run('open f.txt');
    // goto 12: C = 12 + 5 - 1 = 16; H = 21 → lines 12..21, above 11, below round(25 - 16 - 5) = 4
    expect(run('goto 12').output).toBe(
      `[File: ${F} (25 lines total)]\n(11 more lines above)\n${shown(12, 21)}\n(4 more lines below)\n`,
    );
    // goto 25: C = 29 → constrained to 20 → lines 16..25
    expect(run('goto 25').output).toBe(`[File: ${F} (25 lines total)]\n(15 more lines above)\n${shown(16, 25)}\n`);
  });

  it('an odd window rounds lines below half up, as jq does (Python would round 4.5 to 4)', () => {
    run('open f.txt', '0.7', 11);
    // W = 11, goto 11: C = floor(11 + 5.5 - 1) = 15; above floor(9.5) = 9; H = floor(20.5) = 20; below round(4.5) = 5
    expect(run('goto 11', '0.7', 11).output).toBe(
      `[File: ${F} (25 lines total)]\n(9 more lines above)\n${shown(10, 20)}\n(5 more lines below)\n`,
    );
  });

  it('scrolls by W - OVERLAP; from the third scroll in a row 0.7 warns (LAST_ACTION is set by the agent)', () => {
    run('open f.txt');
    const window = `[File: ${F} (25 lines total)]\n(8 more lines above)\n${shown(9, 18)}\n(7 more lines below)\n`;
    expect(run('scroll_down').output).toBe(window);
    expect(run('scroll_up', '0.7', 10, { LAST_ACTION: 'scroll_down' }).output).toBe(
      `[File: ${F} (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`,
    );
    const warning =
      '\nWARNING: Scrolling many times in a row is very inefficient.\nIf you know what you are looking for, use `search_file <pattern>` instead.\n\n';
    expect(run('scroll_down', '0.7', 10, { LAST_ACTION: 'scroll_up' }).output).toBe(window + warning);
    // Another command in between resets the count; 0.6.1 never warns.
    expect(run('scroll_up', '0.7', 10, { LAST_ACTION: 'ls' }).output).not.toContain('WARNING');
    expect(run('scroll_down', '0.6.1', 10, { LAST_ACTION: 'scroll_down' }).output).not.toContain('WARNING');
  });

  it('line out of range and bad arguments', () => {
    expect(run('open f.txt 0').output).toBe(
      `Warning: <line_number> (0) is less than 1\nWarning: Setting <line_number> to 1\n[File: ${F} (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`,
    );
    expect(run('open f.txt 30').output).toBe(
      'Warning: <line_number> (30) is greater than the number of lines in the file (25)\nWarning: Setting <line_number> to 25\n' +
        `[File: ${F} (25 lines total)]\n(15 more lines above)\n${shown(16, 25)}\n`,
    );
    expect(run('open f.txt x').output).toBe(
      'Usage: open "<file>" [<line_number>]\nError: <line_number> must be a number\n',
    );
    expect(run('open f.txt x', '0.6.1').output).toBe(
      'Usage: open <file> [<line_number>]\nError: <line_number> must be a number\n',
    );
    expect(run('goto 30').output).toBe('Error: <line> must be less than or equal to 25\n');
    expect(run('goto').output).toBe('Usage: goto <line>\n');
    expect(run('goto -3').output).toBe('Usage: goto <line>\nError: <line> must be a number\n');
    expect(run('goto 1 2').output).toBe('goto allows only one line number at a time.\n');
  });

  it('no file open, missing file, directory, usage', () => {
    expect(run('goto 3').output).toBe('No file open. Use the open command first.\n');
    expect(run('scroll_down').output).toBe('No file open. Use the open command first.\n');
    expect(run('edit 1:1 << EOF\nx\nEOF').output).toBe('No file open. Use the `open` command first.\n');
    expect(run('open').output).toBe('Usage: open "<file>"\n');
    expect(run('open', '0.1').output).toBe('Usage: open <file>\n');
    expect(run('open missing.txt').output).toBe('File missing.txt not found\n');
    mkdirSync(join(scratch.dir, 'd'));
    expect(run('open d').output).toBe(
      'Error: d is a directory. You can only open files. Use cd or ls to navigate directories.\n',
    );
  });

  it('create writes one newline and opens it; an existing file is opened with an error line', () => {
    const created = join(scratch.dir, 'new.py');
    expect(run('create new.py')).toEqual({ code: 0, output: `[File: ${created} (1 lines total)]\n1:\n` });
    expect(readFileSync(created, 'utf8')).toBe('\n');
    expect(run('create f.txt').output).toBe(
      `Error: File 'f.txt' already exists.\n[File: ${F} (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`,
    );
  });
});

describeWith([commandNeed('flake8', 'flake8')], 'edit s:e with the lint check (0.x)', () => {
  const E = (): string => join(scratch.dir, 'e.py');
  const rule = '-'.repeat(49);
  const updated =
    'File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, etc). Edit the file again if necessary.';
  const code = (last: string): string => `import os\nx = undefined_name\ndef f():\n${last}\n`;
  const window = (last: string): string =>
    `[File: ${E()} (4 lines total)]\n1:import os\n2:x = undefined_name\n3:def f():\n4:${last}`;

  beforeEach(() => {
    writeFileSync(E(), code('    return 1'));
    run('open e.py');
  });

  /** Edits as the agent sends them: the action text through SWE-agent's heredoc guard. */
  const edit = (action: string, version = '0.7') => run(sweAgentActionCommand(action, BUNDLES), version);

  it('success: the window centred on s-1, then the message', () => {
    expect(edit('edit 4:4\n    return 2\nend_of_edit')).toEqual({
      code: 0,
      output: `${window('    return 2')}\n${updated}\n`,
    });
    expect(readFileSync(E(), 'utf8')).toBe(code('    return 2'));
  });

  it('0.6.1+ filter the pre-existing error; 0.3 shows it and refuses the edit', () => {
    expect(edit('edit 4:4\n    return 2\nend_of_edit', '0.6.1').output).toContain(updated);
    writeFileSync(E(), code('    return 1'));
    const refused = edit('edit 4:4\n    return 2\nend_of_edit', '0.3').output;
    expect(refused).toMatch(
      /^Your proposed edit has introduced new syntax error\(s\)\. Please read this error message carefully and then retry editing the file\.\n\nERRORS:\n- F821 undefined name 'undefined_name'\n\n/,
    );
    expect(readFileSync(E(), 'utf8')).toBe(code('    return 1'));
  });

  it('a lint error: both windows (W = n + 10 and e - s + 11) between 49-dash rules, the three closing lines, file restored', () => {
    writeFileSync(join(scratch.dir, 'broken.py'), code('    return (1'));
    const message = flake8Message();
    expect(edit('edit 4:4\n    return (1\nend_of_edit').output).toBe(
      'Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\n' +
        `ERRORS:\n- ${message}\n\n` +
        `This is how your edit would have looked if applied\n${rule}\n${window('    return (1')}\n${rule}\n\n` +
        `This is the original code before your edit\n${rule}\n${window('    return 1')}\n${rule}\n` +
        'Your changes have NOT been applied. Please fix your edit command and try again.\n' +
        'You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.\n' +
        'DO NOT re-run the same failed edit command. Running it again will lead to the same error.\n',
    );
    expect(readFileSync(E(), 'utf8')).toBe(code('    return 1'));
    // 0.1: the old header ("commmand" sic) and every error line as "- " + its words after the first.
    const old = edit('edit 4:4\n    return (1\nend_of_edit', '0.1').output;
    expect(old.split('\n').slice(0, 4)).toEqual([
      'Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.',
      '',
      'ERRORS:',
      `- ${message.split(/\s+/).join(' ')}`,
    ]);
  });

  it('usage errors', () => {
    expect(run('edit').output).toBe('Usage: edit <start_line>:<end_line>\n');
    expect(run('edit 3').output).toBe('Usage: edit <start_line>:<end_line>\n');
    expect(run("edit a:3 << 'end_of_edit'\nx\nend_of_edit").output).toBe(
      'Usage: edit <start_line>:<end_line>\nError: start_line must be a number\n',
    );
    expect(run("edit 3:b << 'end_of_edit'\nx\nend_of_edit").output).toBe(
      'Usage: edit <start_line>:<end_line>\nError: end_line must be a number\n',
    );
  });
});

function flake8Message(): string {
  let out = '';
  try {
    execFileSync('flake8', ['--isolated', '--select=F821,F822,F831,E111,E112,E113,E999,E902', 'broken.py'], {
      cwd: scratch.dir,
      encoding: 'utf8',
    });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  }
  const line = out.split('\n').find((l) => l.includes('E999')) ?? '';
  expect(line).toMatch(/^broken\.py:4:\d+: E999 /);
  return line.slice(line.indexOf(': ') + 2);
}

describe("SWE-agent's heredoc guard (§3)", () => {
  it('adds the quoted heredoc to the first line of an edit block, once', () => {
    expect(guardMultilineAction('edit 2:3\nA\nB\nend_of_edit')).toBe("edit 2:3 << 'end_of_edit'\nA\nB\nend_of_edit");
    expect(guardMultilineAction("edit 2:3 << 'end_of_edit'\nA\nend_of_edit")).toBe(
      "edit 2:3 << 'end_of_edit'\nA\nend_of_edit",
    );
    expect(guardMultilineAction('ls -la')).toBe('ls -la');
  });

  it('keeps the upstream bug: text before an edit cuts as many characters off the edit', () => {
    expect(guardMultilineAction('ls\nedit 1:2\nx\nend_of_edit')).toBe("ls\n\nt 1:2 << 'end_of_edit'\nx\nend_of_edit");
  });

  it('is applied only when the bundles have the line-range edit', () => {
    expect(sweAgentActionCommand('  edit 2:3\nA\nend_of_edit\n', BUNDLES)).toBe(
      "edit 2:3 << 'end_of_edit'\nA\nend_of_edit",
    );
    expect(sweAgentActionCommand("  edit 'a' 'b'\n", ['windowed', 'edit_replace'])).toBe("edit 'a' 'b'");
  });
});
