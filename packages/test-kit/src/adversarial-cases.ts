/**
 * Building blocks of the adversarial corpus (test/adversarial/*.e2e.test.ts): trajectory steps, a command that
 * writes a file exactly (quoted heredoc), and a tiny pytest repository as a vefaas-local image template beside a
 * copy of the examples' pyutils, with the test patch each corpus file grades against.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface BashStep {
  name: 'execute_bash';
  arguments: { command: string };
}

export const bashStep = (command: string): BashStep => ({ name: 'execute_bash', arguments: { command } });

/** A command writing `body` to `path` (a quoted heredoc: no expansion), creating its directory. */
export function writeFileCommand(path: string, body: string): string {
  const dir = path.slice(0, path.lastIndexOf('/'));
  return `mkdir -p '${dir}' && cat > '${path}' <<'RF_EOF'\n${body}\nRF_EOF`;
}

/** `pyrepo`: a pytest repository with the same seeded bug as pyutils (`add` subtracts). */
export const PYREPO_FILES: Readonly<Record<string, string>> = {
  'pyrepo/__init__.py': '',
  'pyrepo/calc.py': 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n',
  'tests/__init__.py': '',
  'tests/test_calc.py': 'from pyrepo.calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
  'setup.cfg': '[metadata]\nname = pyrepo\nversion = 1.0\n\n[tool:pytest]\ntestpaths = tests\n',
};

/** What pyrepo's test patch adds: the failing test for `add`. */
export const PYREPO_TEST_ADDITION =
  '\n\ndef test_add():\n    from pyrepo.calc import add\n\n    assert add(2, 3) == 5\n';

export interface CorpusImages {
  /** vefaas-local's images directory: `pyutils` (copied from examples) and `pyrepo`. */
  imagesDir: string;
  /** pyrepo's test patch (git diff of tests/test_calc.py). */
  pyrepoTestPatch: string;
  close(): void;
}

/** A temporary images directory holding both corpus images. */
export function corpusImages(examplesImagesDir: string): CorpusImages {
  const root = mkdtempSync(join(tmpdir(), 'rf-corpus-'));
  const imagesDir = join(root, 'images');
  cpSync(join(examplesImagesDir, 'pyutils'), join(imagesDir, 'pyutils'), { recursive: true });
  for (const [path, body] of Object.entries(PYREPO_FILES)) {
    mkdirSync(dirname(join(imagesDir, 'pyrepo', path)), { recursive: true });
    writeFileSync(join(imagesDir, 'pyrepo', path), body);
  }
  // The test patch, as git prints it, from a scratch copy.
  const scratch = join(root, 'scratch');
  cpSync(join(imagesDir, 'pyrepo'), scratch, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: scratch, encoding: 'utf8' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'base');
  writeFileSync(join(scratch, 'tests/test_calc.py'), PYREPO_FILES['tests/test_calc.py'] + PYREPO_TEST_ADDITION);
  const pyrepoTestPatch = git('diff');
  return { imagesDir, pyrepoTestPatch, close: () => rmSync(root, { recursive: true, force: true }) };
}
