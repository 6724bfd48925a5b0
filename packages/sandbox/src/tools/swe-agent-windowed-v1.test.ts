// SWE-agent 1.x windowed tools, byte for byte. Expectations are written from windowed-tools.md §5–§10 (the window
// arithmetic F = max(0, min(trunc(x), T-1-W)) in 1.0/1.1 and T-W on main, goto-top(L) = L - W/6, messages as quoted
// there); WINDOW=10 and OVERLAP=2 keep the windows short.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandNeed, itWith } from '@rollout-fleet/test-kit/needs';
import { makeScratch, runSweAgent, type Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';

const TOKEN = '###SWE-AGENT-RETRY-WITH-OUTPUT###';
let scratch: Scratch;
let F: string;

beforeEach(() => {
  scratch = makeScratch();
  F = join(scratch.dir, 'f.txt');
  writeFileSync(F, `${lines(1, 25).join('\n')}\n`);
});
afterEach(() => scratch.cleanup());

function lines(from: number, to: number, prefix = 'l'): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${from + i}`);
}

/** `n:<line>` for lines from..to of f.txt. */
function shown(from: number, to: number): string {
  return lines(from, to)
    .map((line, i) => `${from + i}:${line}`)
    .join('\n');
}

function run(command: string, version = '1.1', bundles?: string[]) {
  return runSweAgent(command, { scratch, version, ...(bundles ? { bundles } : {}) });
}

describe('window display and navigation (1.x)', () => {
  it('open shows the typed path, the first W lines and how many are below; goto puts the line a sixth down', () => {
    expect(run('open f.txt')).toEqual({
      code: 0,
      output: `[File: f.txt (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`,
    });
    // goto 12 → top = trunc(11 - 10/6) = 9: lines 10..19; other tools show the registry's absolute path.
    expect(run('goto 12')).toEqual({
      code: 0,
      output: `[File: ${F} (25 lines total)]\n(9 more lines above)\n${shown(10, 19)}\n(6 more lines below)\n`,
    });
  });

  it('last window: 1.0/1.1 clamp at T-1-W and hide the last line; main shows it', () => {
    run('open f.txt');
    expect(run('goto 25').output).toBe(
      `[File: ${F} (25 lines total)]\n(14 more lines above)\n${shown(15, 24)}\n(1 more lines below)\n`,
    );
    run('open f.txt', 'main');
    expect(run('goto 25', 'main').output).toBe(
      `[File: ${F} (25 lines total)]\n(15 more lines above)\n${shown(16, 25)}\n`,
    );
  });

  it('scrolls by W - OVERLAP and stops at the top', () => {
    run('open f.txt');
    expect(run('scroll_down').output).toBe(
      `[File: ${F} (25 lines total)]\n(8 more lines above)\n${shown(9, 18)}\n(7 more lines below)\n`,
    );
    expect(run('scroll_up').output).toBe(`[File: ${F} (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`);
    expect(run('scroll_up').output).toBe(`[File: ${F} (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`);
  });

  it('re-opening without a line moves the window up from where it was (upstream quirk)', () => {
    run('open f.txt');
    run('goto 20'); // top = trunc(19 - 1.67) = 17, clamped to 14
    // open: goto-top(14 - 1) → trunc(13 - 1.67) = 11 → lines 12..21
    expect(run('open f.txt').output).toBe(
      `[File: f.txt (25 lines total)]\n(11 more lines above)\n${shown(12, 21)}\n(4 more lines below)\n`,
    );
  });

  it('line out of range: warnings and clamping for open, an error for goto', () => {
    expect(run('open f.txt 0').output).toBe(
      `Warning: <line_number> (0) is less than 1\nWarning: Setting <line_number> to 1\n[File: f.txt (25 lines total)]\n${shown(1, 10)}\n(15 more lines below)\n`,
    );
    expect(run('open f.txt 99').output).toBe(
      'Warning: <line_number> (99) is greater than the number of lines in the file (25)\nWarning: Setting <line_number> to 25\n' +
        `[File: f.txt (25 lines total)]\n(14 more lines above)\n${shown(15, 24)}\n(1 more lines below)\n`,
    );
    expect(run('goto 26')).toEqual({ code: 1, output: 'Error: <line> must be less than or equal to 25\n' });
    expect(run('goto x')).toEqual({ code: 1, output: 'Usage: goto <line>\nError: <line> must be a number\n' });
    expect(run('goto 1 2')).toEqual({ code: 1, output: 'goto allows only one line number at a time.\n' });
    expect(run('open f.txt x')).toEqual({
      code: 1,
      output: 'Usage: open "<file>" [<line_number>]\nError: <line_number> must be a number\n',
    });
  });

  it('no file open, missing file, directory', () => {
    expect(run('open')).toEqual({ code: 1, output: 'Usage: open "<file>"\n' });
    expect(run('goto 3')).toEqual({ code: 1, output: 'No file open. Use the open command first.\n' });
    expect(run('scroll_down')).toEqual({ code: 1, output: 'No file open. Use the open command first.\n' });
    expect(run("edit 'a' 'b'")).toEqual({
      code: 1,
      output: 'No file opened. Either `open` or `create` a file first.\n',
    });
    expect(run("insert 'a'")).toEqual({
      code: 1,
      output: `No file opened. Use the \`create\` or \`open\` command first.\n${TOKEN}\n`,
    });
    expect(run('open missing.txt')).toEqual({ code: 1, output: 'Error: File missing.txt not found\n' });
    mkdirSync(join(scratch.dir, 'd'));
    expect(run('open d')).toEqual({
      code: 1,
      output: 'Error: d is a directory. You can only open files. Use cd or ls to navigate directories.\n',
    });
  });

  it('create: an empty file in 1.1, one newline in 1.0, a warning for an existing file', () => {
    expect(run('create sub/new.py')).toEqual({ code: 0, output: '[File: sub/new.py (0 lines total)]\n' });
    expect(readFileSync(join(scratch.dir, 'sub/new.py'), 'utf8')).toBe('');
    expect(run('create new10.py', '1.0')).toEqual({ code: 0, output: '[File: new10.py (1 lines total)]\n1:\n' });
    expect(run('create f.txt')).toEqual({ code: 1, output: "Warning: File 'f.txt' already exists.\n" });
    expect(run('create')).toEqual({ code: 1, output: 'Usage: create <filename>\n' });
  });
});

const REVIEW =
  'Please review the changes and make sure they are correct:\n\n1. The edited file is correctly indented\n' +
  '2. The edited file does not contain duplicate lines\n3. The edit does not break existing functionality\n\nEdit the file again if necessary.';
const P = 'Your edit was not applied (file not modified): ';

describe('search/replace edit and insert (1.x edit_replace)', () => {
  beforeEach(() => {
    run('open f.txt');
  });

  it('replaces in the shown lines and shows the window again', () => {
    const out = run("edit 'l3' 'L3'");
    expect(out).toEqual({
      code: 0,
      output: `Text replaced. ${REVIEW}\n[File: ${F} (25 lines total)]\n${shown(1, 10).replace('3:l3', '3:L3')}\n(15 more lines below)\n`,
    });
  });

  it('refuses several hits in the window, hits only elsewhere, no hit, and equal strings', () => {
    expect(run("edit 'l1' 'X'")).toEqual({
      code: 4,
      output: `${P}Found more than one occurrence of 'l1' in the currently displayed lines.\nPlease make your search string more specific (for example, by including more lines of context).\n\n${TOKEN}\n`,
    });
    expect(run("edit 'l22' 'X'")).toEqual({
      code: 3,
      output:
        `${P}Text 'l22' not found in displayed lines.\n\nHowever, we found the following occurrences of your search string in the file:\n\n- line 22\n\n` +
        `You can use the \`goto\` command to navigate to these locations before running the edit command again.\n\n${TOKEN}\n`,
    });
    expect(run("edit 'zzz' 'X'")).toEqual({
      code: 3,
      output:
        `${P}Text 'zzz' not found in displayed lines (or anywhere in the file).\nPlease modify your search string. Did you forget to properly handle whitespace/indentation?\n` +
        `You can also call \`open\` again to re-display the file with the correct context.\n\n${TOKEN}\n`,
    });
    expect(run("edit 'l2' 'l2'")).toEqual({
      code: 2,
      output: `Your search and replace strings are the same. No changes were made. Please modify your search or replace strings.\n${TOKEN}\n`,
    });
    expect(readFileSync(F, 'utf8')).toBe(`${lines(1, 25).join('\n')}\n`);
  });

  it('any third argument, "False" included, replaces everywhere and counts', () => {
    // l2, l20..l25: seven occurrences; the window goes to the first one's 1-based line.
    const out = run("edit 'l2' 'L2' False");
    const expected = shown(1, 10).replace('2:l2', '2:L2');
    expect(out).toEqual({
      code: 0,
      output: `Replaced 7 occurrences. ${REVIEW}\n[File: ${F} (25 lines total)]\n${expected}\n(15 more lines below)\n`,
    });
    expect(readFileSync(F, 'utf8').match(/L2/g)).toHaveLength(7);
  });

  it('insert: before line N in 1.x releases, after it on main; no line appends and loses the final newline', () => {
    expect(run("insert 'new' 3")).toEqual({
      code: 0,
      output: `[File: ${F} (26 lines total)]\n1:l1\n2:l2\n3:new\n${shown(3, 9).replace(/^(\d+):/gm, (_, n: string) => `${Number(n) + 1}:`)}\n(16 more lines below)\n`,
    });
    writeFileSync(F, `${lines(1, 25).join('\n')}\n`);
    // main inserts at index 3; goto-top(3) → trunc(3 - 1.67) = 1.
    expect(run("insert 'new' 3", 'main').output).toBe(
      `[File: ${F} (26 lines total)]\n(1 more lines above)\n2:l2\n3:l3\n4:new\n${shown(4, 10).replace(/^(\d+):/gm, (_, n: string) => `${Number(n) + 1}:`)}\n(15 more lines below)\n`,
    );
    writeFileSync(F, `${lines(1, 25).join('\n')}\n`);
    // Appended at index 25 → top trunc(25 - 1.67) = 23, clamped to 26-1-10 = 15 in 1.1: the new last line is hidden.
    expect(run("insert 'tail'").output).toBe(
      `[File: ${F} (26 lines total)]\n(15 more lines above)\n${shown(16, 25)}\n(1 more lines below)\n`,
    );
    expect(readFileSync(F, 'utf8')).toBe(`${lines(1, 25).join('\n')}\ntail`);
  });

  itWith(
    [commandNeed('flake8', 'flake8')],
    'a lint error: the layout of §7 with both windows, the file unchanged, the retry token',
    () => {
      const py = join(scratch.dir, 'm.py');
      writeFileSync(py, 'def f():\n    return 1\n');
      run('open m.py');
      writeFileSync(join(scratch.dir, 'broken.py'), 'def f():\n    return (1\n');
      const message = flake8Message('broken.py');
      const window = (body: string): string => `[File: ${py} (2 lines total)]\n1:def f():\n2:${body}`;
      const rule = '-'.repeat(48);
      expect(run("edit 'return 1' 'return (1'")).toEqual({
        code: 4,
        output:
          'Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\n' +
          `ERRORS:\n\n- ${message}\n\n` +
          `This is how your edit would have looked if applied\n${rule}\n${window('    return (1')}\n${rule}\n\n` +
          `This is the original code before your edit\n${rule}\n${window('    return 1')}\n${rule}\n\n` +
          'Your changes have NOT been applied. Please fix your edit command and try again.\n' +
          'DO NOT re-run the same failed edit command. Running it again will lead to the same error.\n\n' +
          `${TOKEN}\n`,
      });
      expect(readFileSync(py, 'utf8')).toBe('def f():\n    return 1\n');
    },
  );
});

/** What the linter says about a file: the message after the first ": " of flake8's line (§7). */
function flake8Message(name: string): string {
  let out = '';
  try {
    execFileSync('flake8', ['--isolated', '--select=F821,F822,F831,E111,E112,E113,E999,E902', name], {
      cwd: scratch.dir,
      encoding: 'utf8',
    });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  }
  const line = out.split('\n')[0] ?? '';
  expect(line).toMatch(/^broken\.py:2:\d+: E999 /);
  return line.slice(line.indexOf(': ') + 2);
}

describe('line-range edit (1.x edit_linting)', () => {
  const bundles = ['windowed', 'search', 'edit_linting', 'submit'];

  it('replaces lines s..e with the heredoc text and shows the window from goto-top(s-1)', () => {
    run('open f.txt', '1.1', bundles);
    const out = run("edit 2:3 << 'end_of_edit'\nA\nB\nC\nend_of_edit", '1.1', bundles);
    expect(out).toEqual({
      code: 0,
      output:
        'File updated. Please review the changes and make sure they are correct\n(correct indentation, no duplicate lines, etc). Edit the file again if necessary.\n' +
        `[File: ${F} (26 lines total)]\n1:l1\n2:A\n3:B\n4:C\n${shown(4, 9).replace(/^(\d+):/gm, (_, n: string) => `${Number(n) + 1}:`)}\n(16 more lines below)\n`,
    });
    expect(run('edit 2', '1.1', bundles)).toEqual({
      code: 1,
      output: 'Usage: edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit\n',
    });
  });
});

describe('search tools', () => {
  beforeEach(() => {
    const proj = join(scratch.dir, 'proj');
    mkdirSync(join(proj, '.hidden'), { recursive: true });
    mkdirSync(join(proj, 'sub'));
    writeFileSync(join(proj, 'a.py'), 'foo\nbar foo\n');
    writeFileSync(join(proj, 'b.txt'), 'foo\n');
    writeFileSync(join(proj, '.hidden', 'c.py'), 'foo\n');
    writeFileSync(join(proj, 'sub', 'd.py'), 'nothing\n');
  });

  it('search_dir counts matching lines per file, skips hidden paths, sorts by path', () => {
    const dir = join(scratch.dir, 'proj');
    expect(run('search_dir foo proj')).toEqual({
      code: 0,
      output: `Found 3 matches for "foo" in ${dir}:\n${dir}/a.py (2 matches)\n${dir}/b.txt (1 matches)\nEnd of matches for "foo" in ${dir}\n`,
    });
    expect(run('search_dir zzz proj').output).toBe(`No matches found for "zzz" in ${dir}\n`);
    expect(run('search_dir foo nodir').output).toBe('Directory nodir not found\n');
    expect(run('search_dir').output).toBe('Usage: search_dir <search_term> [<dir>]\n');
  });

  it('search_dir over the 100-file cap names the actual count', () => {
    const many = join(scratch.dir, 'many');
    mkdirSync(many);
    for (let i = 0; i < 101; i += 1) writeFileSync(join(many, `f${i}.txt`), 'hit\n');
    expect(run('search_dir hit many').output).toBe(
      `More than 101 files matched for "hit" in ${many}. Please narrow your search.\n`,
    );
  });

  it('search_file lists matching lines in order, on the open file when none is named', () => {
    const a = join(scratch.dir, 'proj', 'a.py');
    expect(run('search_file foo').output).toBe('No file open. Use the open command first.\n');
    expect(run('search_file foo proj/a.py').output).toBe(
      `Found 2 matches for "foo" in ${a}:\nLine 1:foo\nLine 2:bar foo\nEnd of matches for "foo" in ${a}\n`,
    );
    run('open proj/a.py');
    expect(run('search_file bar').output).toBe(
      `Found 1 matches for "bar" in ${a}:\nLine 2:bar foo\nEnd of matches for "bar" in ${a}\n`,
    );
    expect(run('search_file foo nofile').output).toBe(
      'Usage: search_file <search_term> [<file>]\nError: File name nofile not found. Please provide a valid file name.\n',
    );
    expect(run('search_file zzz proj/a.py').output).toBe(`No matches found for "zzz" in ${a}\n`);
    expect(run('search_file').output).toBe('Usage: search_file <search_term> [<file>]\n');
  });

  it('search_file over 100 matching lines lists every one: its "More than N lines" guard counts file names (§9)', () => {
    const big = join(scratch.dir, 'proj', 'big.txt');
    writeFileSync(big, `${lines(1, 150, 'hit').join('\n')}\n`);
    const out = run('search_file hit proj/big.txt').output.split('\n');
    expect(out[0]).toBe(`Found 150 matches for "hit" in ${big}:`);
    expect(out.slice(1, 151)).toEqual(lines(1, 150, 'hit').map((line, i) => `Line ${i + 1}:${line}`));
    expect(out.slice(151)).toEqual([`End of matches for "hit" in ${big}`, '']);
  });

  it('find_file: glob names, hidden paths included, no end line', () => {
    const dir = join(scratch.dir, 'proj');
    const out = run("find_file '*.py' proj").output.split('\n');
    expect(out[0]).toBe(`Found 3 matches for "*.py" in ${dir}:`);
    expect(out.slice(1, -1).sort()).toEqual([`${dir}/.hidden/c.py`, `${dir}/a.py`, `${dir}/sub/d.py`]);
    expect(out.at(-1)).toBe('');
    expect(run('find_file zzz proj').output).toBe(`No matches found for "zzz" in ${dir}\n`);
    expect(run('find_file').output).toBe('Usage: find_file <file_name> [<dir>]\n');
  });
});

describe('submit', () => {
  function repo(): string {
    const dir = join(scratch.dir, 'repo');
    mkdirSync(dir);
    const git = (...args: string[]): string =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' });
    writeFileSync(join(dir, 'x.py'), 'x = 1\n');
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'base');
    writeFileSync(join(dir, 'x.py'), 'x = 2\n');
    writeFileSync(join(dir, 'new.py'), 'y = 1\n');
    return dir;
  }
  const patchOf = (dir: string): string => execFileSync('git', ['diff', '--cached'], { cwd: dir, encoding: 'utf8' });

  it('1.0/1.1 print the staged diff between two markers and write ~/model.patch; main prints the marker only', () => {
    const dir = repo();
    const out = runSweAgent('submit', { scratch, version: '1.1', env: { ROOT: dir } });
    const patch = patchOf(dir);
    expect(patch).toContain('new file mode');
    expect(out).toEqual({ code: 0, output: `<<SWE_AGENT_SUBMISSION>>\n${patch}<<SWE_AGENT_SUBMISSION>>\n` });
    expect(readFileSync(join(scratch.home, 'model.patch'), 'utf8')).toBe(patch);
    expect(runSweAgent('submit', { scratch, version: 'main', env: { ROOT: dir } }).output).toBe(
      '<<SWE_AGENT_SUBMISSION>>\n',
    );
  });

  it('reverse-applies a non-empty ~/test.patch first', () => {
    const dir = repo();
    writeFileSync(join(dir, 'test_x.py'), 'assert True\n');
    execFileSync('git', ['add', 'test_x.py'], { cwd: dir });
    const testPatch = execFileSync('git', ['diff', '--cached', '--', 'test_x.py'], { cwd: dir, encoding: 'utf8' });
    writeFileSync(join(scratch.home, 'test.patch'), testPatch);
    const out = runSweAgent('submit', { scratch, version: '1.1', env: { ROOT: dir } }).output;
    expect(out).not.toContain('test_x.py');
    expect(out).toContain('new.py');
  });
});
