/**
 * Test support (not used at runtime): runs the bundle's Python tools on the host, in a scratch directory with a
 * minimal environment, the way a sandbox session would run them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { TOOL_BUNDLE_DIR } from '@rollout-fleet/sandbox';

export type BundleTool = 'str_replace_editor' | 'execute_bash';

export interface ToolRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
}

/**
 * The interpreter the tests run the tools with: $ROLLOUT_FLEET_TEST_PYTHON (e.g. a Python 3.8 to check
 * compatibility), else the system one (sandbox images have it), else the real binary behind `python3`
 * (version-manager shims need variables a clean environment lacks).
 */
export const PYTHON: string =
  process.env.ROLLOUT_FLEET_TEST_PYTHON ??
  (existsSync('/usr/bin/python3')
    ? '/usr/bin/python3'
    : execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim());

export const BUNDLE_BIN = join(TOOL_BUNDLE_DIR, 'bin');
export const BUNDLE_LIB = join(TOOL_BUNDLE_DIR, 'lib');

/** PATH inside the harness: the bundle, the interpreter, the system. */
export const HARNESS_PATH = [...new Set([BUNDLE_BIN, dirname(PYTHON), '/usr/local/bin', '/usr/bin', '/bin'])].join(':');

export interface Scratch {
  /** A fresh directory (symlinks resolved, so it equals Python's `Path.cwd()` when used as cwd). */
  readonly dir: string;
  /** HOME of the tools: the editor keeps its undo history under it. */
  readonly home: string;
  cleanup(): void;
}

export function makeScratch(): Scratch {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rf-tools-')));
  const dir = join(root, 'work');
  const home = join(root, 'home');
  execFileSync('mkdir', ['-p', dir, home]);
  return { dir, home, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export interface RunOptions {
  readonly scratch: Scratch;
  readonly cwd?: string;
  readonly env?: Record<string, string>;
}

export function harnessEnv(scratch: Scratch, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: HARNESS_PATH, HOME: scratch.home, ...extra };
}

/** `python3 <bundle>/bin/<tool> ...args`. */
export function runTool(tool: BundleTool, args: readonly string[], options: RunOptions): ToolRun {
  const result = spawnSync(PYTHON, [join(BUNDLE_BIN, tool), ...args], {
    cwd: options.cwd ?? options.scratch.dir,
    env: harnessEnv(options.scratch, options.env),
    encoding: 'utf8',
  });
  return { stdout: result.stdout, stderr: result.stderr, code: result.status };
}

/** `bash -c <command line>` with the bundle on PATH, as a sandbox session runs a replayed step. */
export function runShell(
  commandLine: string,
  options: RunOptions,
): { stdout: Buffer; stderr: string; code: number | null } {
  const result = spawnSync('bash', ['-c', commandLine], {
    cwd: options.cwd ?? options.scratch.dir,
    env: harnessEnv(options.scratch, options.env),
  });
  return { stdout: result.stdout, stderr: result.stderr.toString('utf8'), code: result.status };
}

/** Runs Python code with the bundle's lib on sys.path (for failures no command line can provoke). */
export function runPython(code: string, options: RunOptions): ToolRun {
  const result = spawnSync(PYTHON, ['-c', code], {
    cwd: options.cwd ?? options.scratch.dir,
    env: harnessEnv(options.scratch, { PYTHONPATH: BUNDLE_LIB, PYTHONDONTWRITEBYTECODE: '1', ...options.env }),
    encoding: 'utf8',
  });
  return { stdout: result.stdout, stderr: result.stderr, code: result.status };
}

/** Python's str.expandtabs(8): columns reset at every \n and \r. */
export function expandTabs(text: string): string {
  let out = '';
  let column = 0;
  for (const char of text) {
    if (char === '\t') {
      const spaces = 8 - (column % 8);
      out += ' '.repeat(spaces);
      column += spaces;
    } else if (char === '\n' || char === '\r') {
      out += char;
      column = 0;
    } else {
      out += char;
      column += 1;
    }
  }
  return out;
}

export const CLIPPED_NOTE =
  '<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>';

/** The `cat -n` block of tools spec §3.4, written from the spec's rules (the expectation side of the tests). */
export function specBlock(text: string, descriptor: string, first = 1): string {
  const clipped = text.length > 16_000 ? text.slice(0, 16_000) + CLIPPED_NOTE : text;
  const numbered = expandTabs(clipped)
    .split('\n')
    .map((line, index) => `${String(index + first).padStart(6, ' ')}\t${line}`)
    .join('\n');
  return `Here's the result of running \`cat -n\` on ${descriptor}:\n${numbered}\n`;
}

/** A SWE-agent release line and bundles, as an episode's `tool_bundle` names them. */
export interface SweAgentRun extends RunOptions {
  readonly version: string;
  readonly bundles?: readonly string[];
  readonly window?: number;
}

/**
 * `bash -c <command line>` with SWE-agent bundles on PATH (later bundles first, as the worker installs them) and
 * the variables the worker exports; state goes to the scratch HOME. stdout and stderr are merged, as the agent's
 * session saw them.
 */
export function runSweAgent(commandLine: string, options: SweAgentRun): { output: string; code: number | null } {
  const bundles = options.bundles ?? ['windowed', 'search', 'edit_replace', 'submit'];
  const dirs = [...bundles].reverse().map((bundle) => join(TOOL_BUNDLE_DIR, 'swe-agent', bundle, 'bin'));
  const result = spawnSync('bash', ['-c', `exec 2>&1\n${commandLine}`], {
    cwd: options.cwd ?? options.scratch.dir,
    env: {
      ...harnessEnv(options.scratch, options.env),
      PATH: [...dirs, HARNESS_PATH].join(':'),
      ROLLOUT_FLEET_SWE_AGENT: options.version,
      WINDOW: String(options.window ?? 10),
      OVERLAP: '2',
      ...options.env,
    },
  });
  return { output: result.stdout.toString('utf8'), code: result.status };
}
