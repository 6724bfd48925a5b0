import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandInput, CommandResponse } from '@rollout-fleet/sandbox';
import { buildApplyPatchScript } from './apply-patch-script.js';
import type { ExecShell } from './extract-patch.js';
import { restoreTestSide } from './restore-test-side.js';

/** /execute run by local bash, as a SWE-ReX server would run it. */
const localShell: ExecShell = {
  execute(input: CommandInput): Promise<CommandResponse> {
    const [cmd, ...args] = input.command as string[];
    const run = spawnSync(cmd as string, args, { encoding: 'utf8', env: input.env as NodeJS.ProcessEnv });
    return Promise.resolve({ stdout: run.stdout, stderr: run.stderr, exit_code: run.status });
  },
};

const SETUP_CFG = [
  '[metadata]',
  'name = pyutils',
  '',
  '[tool:pytest]',
  'testpaths = tests',
  '',
  '[flake8]',
  'max-line-length = 100',
  '',
].join('\n');

const PYPROJECT = ['[project]', 'name = "pyutils"', '', '[tool.pytest.ini_options]', 'addopts = "-q"', ''].join('\n');

describe('restoreTestSide, real bash + git', () => {
  let dir: string;
  let repo: string;
  const write = (path: string, body: string): void => {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), body);
  };
  const read = (path: string): string => readFileSync(join(repo, path), 'utf8');
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' });
  let base: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'restore-'));
    repo = join(dir, 'repo');
    mkdirSync(repo);
    git('init', '-q');
    write('pyutils/__init__.py', '');
    write('pyutils/calc.py', 'def add(a, b):\n    return a - b\n');
    write('tests/__init__.py', '');
    write('tests/test_calc.py', 'import unittest\n');
    write('setup.cfg', SETUP_CFG);
    write('pyproject.toml', PYPROJECT);
    git('add', '-A');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'base');
    base = git('rev-parse', 'HEAD').trim();
    // An untracked build artefact of the image, which is not the patch's.
    write('build/lib/tests/helper.py', 'artefact\n');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Apply `edit` as a patch would (the apply script's snapshot first), then restore. */
  async function patchAndRestore(
    edit: () => void,
    testPatch = 'diff --git a/tests/test_calc.py b/tests/test_calc.py\n',
  ) {
    const snapshot = join(dir, 'untracked.before');
    spawnSync('/bin/bash', ['-c', buildApplyPatchScript('/dev/null', { repoDir: repo, untrackedSnapshot: snapshot })]);
    edit();
    return restoreTestSide(localShell, {
      repoDir: repo,
      eval: { base_commit: base, test_patch: testPatch },
      untrackedSnapshot: snapshot,
    });
  }

  it('puts back conftest, tests/__init__.py, a shadow package and a root unittest; keeps the fix and the artefacts', async () => {
    const outcome = await patchAndRestore(() => {
      write('pyutils/calc.py', 'def add(a, b):\n    return a + b\n');
      write('pyutils/__init__.py', 'VERSION = 2\n');
      write('conftest.py', 'import evil\n');
      write('tests/__init__.py', 'import os; os._exit(0)\n');
      write('tests/test_calc/__init__.py', 'rigged = True\n');
      write('unittest/__init__.py', 'rigged = True\n');
      write('tests/__pycache__/test_calc.cpython-311.pyc', 'x');
    });
    expect(outcome).toMatchObject({ ok: true });
    if (!outcome.ok) return;
    expect(outcome.restored).toEqual([
      'conftest.py',
      'tests/__init__.py',
      'tests/__pycache__/test_calc.cpython-311.pyc',
      'tests/test_calc/__init__.py',
      'unittest/__init__.py',
    ]);
    expect(outcome.findings.map((f) => f.code)).toEqual(['TEST_FILE_SHADOWED', 'RUNNER_SHADOWED']);
    expect(read('pyutils/calc.py')).toContain('a + b');
    expect(read('pyutils/__init__.py')).toBe('VERSION = 2\n');
    expect(read('tests/__init__.py')).toBe('');
    for (const gone of ['conftest.py', 'tests/test_calc/__init__.py', 'unittest/__init__.py'])
      expect(existsSync(join(repo, gone)), gone).toBe(false);
    expect(read('build/lib/tests/helper.py')).toBe('artefact\n');
  });

  it("restores only setup.cfg's and pyproject.toml's test-runner sections, keeping the fix's other changes", async () => {
    const outcome = await patchAndRestore(() => {
      write(
        'setup.cfg',
        SETUP_CFG.replace('name = pyutils', 'name = pyutils2')
          .replace('testpaths = tests', 'testpaths = tests\naddopts = -p evil_plugin')
          .concat('[coverage:run]\nplugins = evil\n'),
      );
      write('pyproject.toml', PYPROJECT.replace('addopts = "-q"', 'addopts = "-p evil"').replace('"pyutils"', '"pu"'));
    });
    expect(outcome).toMatchObject({ ok: true, restored: ['pyproject.toml', 'setup.cfg'] });
    const cfg = read('setup.cfg');
    expect(cfg).toContain('name = pyutils2');
    expect(cfg).toContain('[flake8]\nmax-line-length = 100');
    expect(cfg).toContain('[tool:pytest]\ntestpaths = tests\n');
    expect(cfg).not.toContain('evil');
    const toml = read('pyproject.toml');
    expect(toml).toContain('name = "pu"');
    expect(toml).toContain('addopts = "-q"');
    expect(toml).not.toContain('evil');
  });

  it('a fix that edits only non-test sections of setup.cfg and source __init__.py files restores nothing', async () => {
    const outcome = await patchAndRestore(() => {
      write('setup.cfg', SETUP_CFG.replace('max-line-length = 100', 'max-line-length = 120'));
      write('pyutils/__init__.py', 'from .calc import add\n');
    });
    expect(outcome).toEqual({ ok: true, restored: [], findings: [] });
    expect(read('setup.cfg')).toContain('max-line-length = 120');
  });

  it('removes a symlink that replaced the tests directory, then checks the tests out beneath it', async () => {
    const outcome = await patchAndRestore(() => {
      const elsewhere = join(dir, 'elsewhere');
      mkdirSync(elsewhere);
      writeFileSync(join(elsewhere, 'test_calc.py'), 'rigged\n');
      rmSync(join(repo, 'tests'), { recursive: true });
      symlinkSync(elsewhere, join(repo, 'tests'));
    });
    expect(outcome).toMatchObject({ ok: true });
    expect(lstatSync(join(repo, 'tests')).isDirectory()).toBe(true);
    expect(read('tests/test_calc.py')).toBe('import unittest\n');
  });
});
