import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApplyPatchScript } from './apply-patch-script.js';

const ORIGINAL = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

function hunk(contextBefore: string[], contextAfter: string[]): string {
  return [
    'diff --git a/file.txt b/file.txt',
    '--- a/file.txt',
    '+++ b/file.txt',
    '@@ -3,7 +3,7 @@',
    ...contextBefore.map((line) => ` ${line}`),
    '-line 6',
    '+line six',
    ...contextAfter.map((line) => ` ${line}`),
    '',
  ].join('\n');
}

describe('buildApplyPatchScript run by real bash + git', () => {
  let dir: string;
  let repoDir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'apply-patch-'));
    repoDir = join(dir, 'repo');
    execFileSync('git', ['init', '-q', repoDir]);
    writeFileSync(join(repoDir, 'file.txt'), ORIGINAL);
    execFileSync('git', ['add', '.'], { cwd: repoDir });
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'base'], {
      cwd: repoDir,
    });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function apply(patch: string): { status: number | null; stdout: string; file: string } {
    const patchPath = join(dir, 'patch.diff');
    writeFileSync(patchPath, patch);
    const run = spawnSync('/bin/bash', ['-c', buildApplyPatchScript(patchPath, { repoDir })], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout, file: readFileSync(join(repoDir, 'file.txt'), 'utf8') };
  }

  it('applies a clean patch with the first command', () => {
    const result = apply(hunk(['line 3', 'line 4', 'line 5'], ['line 7', 'line 8', 'line 9']));
    expect(result.status).toBe(0);
    expect(result.stdout.startsWith('>>>>> Applied Patch:\n')).toBe(true);
    expect(result.stdout).toContain('Applied patch file.txt cleanly.');
    expect(result.stdout).not.toContain('Failed to apply patch');
    expect(result.file).toBe(ORIGINAL.replace('line 6\n', 'line six\n'));
  });

  it('falls back to patch --fuzz=5 when the outer context lines no longer match', () => {
    const result = apply(hunk(['line three', 'line 4', 'line 5'], ['line 7', 'line 8', 'line nine']));
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Failed to apply patch to container: git apply --verbose\n');
    expect(result.stdout).toContain('>>>>> Applied Patch:\n');
    expect(result.stdout).toMatch(/with fuzz/);
    expect(result.file).toBe(ORIGINAL.replace('line 6\n', 'line six\n'));
  });

  it('reports a patch that no command can apply and exits 1', () => {
    const bad = hunk(['alpha', 'beta', 'gamma'], ['delta', 'epsilon', 'zeta']).replace('-line 6', '-not there');
    const result = apply(bad);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('Failed to apply patch to container: patch --batch --forward --fuzz=5 -p1 -i\n');
    expect(result.stdout).toContain('>>>>> Patch Apply Failed:\n');
    expect(result.stdout).not.toContain('>>>>> Applied Patch');
    expect(result.file).toBe(ORIGINAL);
  });

  it('never reverses a hunk that reads as already applied (patch --batch alone assumes -R and reverts the fix)', () => {
    // The tree already has the change: git apply refuses, and patch --forward must not undo it.
    writeFileSync(join(repoDir, 'file.txt'), ORIGINAL.replace('line 6\n', 'line six\n'));
    const result = apply(hunk(['line 3', 'line 4', 'line 5'], ['line 7', 'line 8', 'line 9']));
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('>>>>> Patch Apply Failed:\n');
    expect(result.stdout).toMatch(/Reversed \(or previously applied\) patch detected!\s+Skipping patch/);
    expect(result.file).toBe(ORIGINAL.replace('line 6\n', 'line six\n'));
  });

  it('applies a git binary patch exactly, with the text change beside it', () => {
    const bin = join(repoDir, 'blob.bin');
    writeFileSync(bin, Buffer.from([0, 1, 2, 3, 255, 0, 10]));
    execFileSync('git', ['add', '-N', 'blob.bin'], { cwd: repoDir });
    writeFileSync(join(repoDir, 'file.txt'), ORIGINAL.replace('line 6\n', 'line six\n'));
    const patch = execFileSync('git', ['diff', '--binary'], { cwd: repoDir, encoding: 'utf8' });
    execFileSync('git', ['reset', '-q', '--hard'], { cwd: repoDir });
    rmSync(bin, { force: true });
    const result = apply(patch);
    expect(result.status).toBe(0);
    expect(result.file).toBe(ORIGINAL.replace('line 6\n', 'line six\n'));
    expect([...readFileSync(bin)]).toEqual([0, 1, 2, 3, 255, 0, 10]);
  });

  it('writes the untracked-file snapshot before applying', () => {
    writeFileSync(join(repoDir, 'image-artifact.so'), 'x');
    const patchPath = join(dir, 'patch.diff');
    writeFileSync(
      patchPath,
      'diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n',
    );
    const snapshot = join(dir, 'untracked');
    const run = spawnSync('/bin/bash', [
      '-c',
      buildApplyPatchScript(patchPath, { repoDir, untrackedSnapshot: snapshot }),
    ]);
    expect(run.status).toBe(0);
    expect(readFileSync(snapshot, 'utf8').split('\0').filter(Boolean)).toEqual(['image-artifact.so']);
  });

  it('quotes a patch path with spaces and quotes', () => {
    const script = buildApplyPatchScript("/tmp/it's a patch.diff");
    expect(script).toContain(`patch_file='/tmp/it'"'"'s a patch.diff'`);
    expect(script).toContain('cd /testbed ||');
  });
});
