/**
 * Which paths of a patched repository are test-side (docs/adversarial-grading.md, vector 9): put back to
 * base_commit + test_patch before the eval, because the patch's code there runs inside the test process or
 * decides what the runner loads. A pure rule over paths: the test_patch's paths, and the patched tree's changed
 * paths (`git diff --name-only <base>` plus new untracked files, listed in the sandbox by restore-script.ts).
 *
 * Whole path components only, never the substring "test": `src/_pytest/…` (pytest's own fixes) and
 * `sympy/utilities/randtest.py` are real code. Measured on every SWE-bench Lite gold patch by
 * `npm run bench:restore-rules` (no gold hunk is lost).
 */
import type { IntegrityFinding } from '@rollout-fleet/shared';
import { RUNNER_MODULE_NAMES, STARTUP_MODULE_NAMES, STDLIB_MODULE_NAMES } from './shadowed-names.js';

/** Why a path is test-side; stable strings, shown in docs/adversarial-grading.md. */
export type RestoreReason =
  | 'test-patch'
  | 'shadows-test-patch'
  | 'test-directory'
  | 'conftest'
  | 'runner-config'
  | 'runner-sections'
  | 'bytecode'
  | 'startup-hook'
  | 'shadows-stdlib-or-runner';

/** Directory names whose whole contents are the tests' (a whole component, anywhere in the path). */
export const TEST_DIRECTORY_NAMES: ReadonlySet<string> = new Set(['test', 'tests', 'testing']);

/** Files pytest reads its configuration from, at any depth (it searches the test paths' ancestors). */
export const RUNNER_CONFIG_FILES: ReadonlySet<string> = new Set(['pytest.ini', '.pytest.ini', 'tox.ini']);

/** Files of which only the test-runner sections are put back (the fix may change the rest). */
export const SECTIONED_CONFIG_FILES: ReadonlySet<string> = new Set(['setup.cfg', 'pyproject.toml']);

/** Extensions an importable module can have beside (and instead of) a `.py` file. */
const MODULE_EXTENSIONS = ['.py', '.pyc', '.pyo', '.pyw', '.so', '.pyd'];

export interface RestoreInput {
  /** Every path the test_patch names (old and new sides, new files included). */
  testPatchPaths: readonly string[];
  /** The patched tree's changed paths: tracked files that differ from base_commit, and new files. */
  changedPaths: readonly string[];
}

export interface RestoreEntry {
  path: string;
  reason: RestoreReason;
}

export interface RestorePlan {
  /** Put back whole: `git checkout <base> -- path`, or deleted when the base has no such file. Sorted. */
  files: RestoreEntry[];
  /** Only their test-runner sections put back (setup.cfg, pyproject.toml). Sorted. */
  sections: RestoreEntry[];
  /** What a genuine fix never does (shadowing a test file, the runner or Python's start-up): `violated`. */
  findings: IntegrityFinding[];
}

const basename = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const dirname = (path: string): string => (path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '');

/** `a/b/name.ext` → `name` for a module file; undefined when the last component is not one. */
function moduleStem(file: string): string | undefined {
  const ext = MODULE_EXTENSIONS.find((e) => file.endsWith(e));
  if (ext === undefined) return undefined;
  const stem = file.slice(0, -ext.length);
  // `x.cpython-311-x86_64-linux-gnu.so`: extension modules carry a tag after the name.
  return ext === '.so' || ext === '.pyd' ? (stem.split('.')[0] ?? stem) : stem;
}

/**
 * The module a test_patch file is imported as may be found elsewhere first: a package directory of the same
 * name beside it (`tests/test_x/__init__.py` beside `tests/test_x.py`), an extension module or bytecode of the
 * same name, or its cached bytecode in `__pycache__`.
 */
function shadowsTestFile(path: string, testFile: string): boolean {
  if (!testFile.endsWith('.py') || path === testFile) return false;
  const dir = dirname(testFile);
  const stem = basename(testFile).slice(0, -'.py'.length);
  const prefix = dir === '' ? '' : `${dir}/`;
  if (path.startsWith(`${prefix}${stem}/`)) return true;
  if (dirname(path) === dir && moduleStem(basename(path)) === stem) return true;
  return dirname(path) === `${prefix}__pycache__` && basename(path).startsWith(`${stem}.`);
}

/** The top-level import name a root-level path provides (`unittest/x.py` → unittest, `argparse.py` → argparse). */
function rootModuleName(path: string): string | undefined {
  const slash = path.indexOf('/');
  if (slash >= 0) return path.slice(0, slash);
  return moduleStem(path);
}

/** A `.py` module directly in the top-level test directory that test discovery would not collect. */
function isImportedModule(parts: readonly string[]): boolean {
  // Only in the repository's own top-level test directory: below a package (django/test/, sympy/testing/) the test
  // directory is a test framework, runner code the eval must not take from the patch.
  if (!TEST_DIRECTORY_NAMES.has(parts[0] ?? '') || parts.length !== 2) return false;
  const name = parts.at(-1) ?? '';
  if (!name.endsWith('.py') || TEST_DIRECTORY_NAMES.has(name.slice(0, -3))) return false;
  if (name === '__init__.py' || name === 'conftest.py' || name === 'tests.py') return false;
  return !(name.startsWith('test_') || name.endsWith('_test.py'));
}

/** Why `path` is test-side, or undefined when it is the fix's own business. */
export function testSideReason(path: string, testPatchPaths: ReadonlySet<string>): RestoreReason | undefined {
  if (testPatchPaths.has(path)) return 'test-patch';
  const parts = path.split('/');
  const name = parts.at(-1) ?? '';
  // Bytecode is deleted wherever it is, without a finding: running Python leaves it in any work tree.
  if (name.endsWith('.pyc') || name.endsWith('.pyo') || parts.includes('__pycache__')) return 'bytecode';
  for (const testFile of testPatchPaths) if (shadowsTestFile(path, testFile)) return 'shadows-test-patch';
  const stem = moduleStem(name);
  // Start-up hooks and runner shadows first: they are findings, whatever directory they are in.
  const startup = (part: string | undefined): boolean => part !== undefined && STARTUP_MODULE_NAMES.has(part);
  if (name.endsWith('.pth') || startup(stem) || parts.slice(0, -1).some(startup)) return 'startup-hook';
  const root = rootModuleName(path);
  if (
    root !== undefined &&
    (STDLIB_MODULE_NAMES.has(root) || RUNNER_MODULE_NAMES.has(root)) &&
    !TEST_DIRECTORY_NAMES.has(root)
  )
    return 'shadows-stdlib-or-runner';
  // The last component too: a `tests` symlink replacing the directory, sympy's `bin/test` runner. Directly in the
  // top-level test directory, a Python module that test discovery does not collect (not test_*.py / *_test.py /
  // tests.py / __init__.py / conftest.py) is code the tests import, which may be the repository's source
  // (SWE-agent's test repository keeps its code in tests/): the fix's business, as any module outside.
  if (parts.some((part) => TEST_DIRECTORY_NAMES.has(part)) && !isImportedModule(parts)) return 'test-directory';
  if (stem === 'conftest') return 'conftest';
  if (RUNNER_CONFIG_FILES.has(name)) return 'runner-config';
  if (SECTIONED_CONFIG_FILES.has(name)) return 'runner-sections';
  return undefined;
}

const FINDING_OF: Partial<Record<RestoreReason, { code: string; what: string }>> = {
  'shadows-test-patch': { code: 'TEST_FILE_SHADOWED', what: 'shadows a file of the test patch' },
  'startup-hook': {
    code: 'STARTUP_HOOK_ADDED',
    what: "is run by Python's start-up (sitecustomize, usercustomize, .pth)",
  },
  'shadows-stdlib-or-runner': {
    code: 'RUNNER_SHADOWED',
    what: 'shadows the standard library or the test runner from the repository root',
  },
};

/** The plan for one eval: what to put back and what to report. Deterministic (sorted, de-duplicated). */
export function planRestore(input: RestoreInput): RestorePlan {
  const testPaths = new Set(input.testPatchPaths.filter((p) => p !== '' && p !== '/dev/null'));
  const files: RestoreEntry[] = [];
  const sections: RestoreEntry[] = [];
  const findings: IntegrityFinding[] = [];
  // Only changed paths: an untouched test file needs nothing (the eval script resets the test patch's files anyway),
  // and a file the test patch creates that the patch pre-created is a changed (new) path.
  for (const path of [...new Set(input.changedPaths)].sort()) {
    const reason = testSideReason(path, testPaths);
    if (reason === undefined) continue;
    (reason === 'runner-sections' ? sections : files).push({ path, reason });
    const finding = FINDING_OF[reason];
    if (finding !== undefined) {
      findings.push({
        code: finding.code,
        severity: 'violated',
        detail: `${path} ${finding.what}; put back to the base commit`,
      });
    }
  }
  return { files, sections, findings };
}

// `diff --git a/x b/x`, and git's quoted form for odd names: `diff --git "a/t\303\251st" "b/t\303\251st"`.
const GIT_HEADER_RE = /^diff --git (?:"a\/((?:[^"\\]|\\.)*)"|a\/(\S+)) (?:"b\/((?:[^"\\]|\\.)*)"|b\/(\S+))$/gm;
const RENAME_RE = /^(?:rename|copy) (?:from|to) (.+)$/gm;

/** Every path a git patch names: both sides of each `diff --git` header and of renames. */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const m of patch.matchAll(GIT_HEADER_RE)) {
    const a = m[1] !== undefined ? unquoteGitPath(m[1]) : m[2];
    const b = m[3] !== undefined ? unquoteGitPath(m[3]) : m[4];
    if (a !== undefined) paths.add(a);
    if (b !== undefined) paths.add(b);
  }
  for (const m of patch.matchAll(RENAME_RE)) {
    const raw = m[1] ?? '';
    paths.add(raw.startsWith('"') && raw.endsWith('"') ? unquoteGitPath(raw.slice(1, -1)) : raw);
  }
  return [...paths].sort();
}

/** Git's C-style quoting (`\303\251`, `\t`, `\"`, `\\`) back to the UTF-8 path. */
export function unquoteGitPath(quoted: string): string {
  const bytes: number[] = [];
  const simple: Record<string, number> = { n: 10, t: 9, '"': 34, '\\': 92, a: 7, b: 8, f: 12, r: 13, v: 11 };
  for (let i = 0; i < quoted.length; i += 1) {
    const ch = quoted[i] as string;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = quoted[i + 1] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(quoted.slice(i + 1, i + 4), 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
