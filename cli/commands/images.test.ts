/** `rollout-fleet images`: what a user types and sees — output, progress on stderr, exit codes. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { buildTestImage, testImageToolsMissing, type TestImage } from '@rollout-fleet/test-kit/test-images';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      { env: { ...process.env, VEFAAS_LOCAL_IMAGES_DIR: '', ...env } },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code ?? 1), stdout, stderr }),
    );
  });
}

const need = {
  what: 'skopeo, umoci and busybox-static',
  missing: testImageToolsMissing(),
  install: 'sudo apt-get install -y skopeo umoci busybox-static',
};

describeWith([need], 'rollout-fleet images', () => {
  let built: TestImage;
  let imagesDir: string;
  beforeAll(async () => {
    built = await buildTestImage({ name: 'rf-cli', bash: true });
    imagesDir = await mkdtemp(join(tmpdir(), 'rf-cli-images-'));
  }, 120_000);
  afterAll(async () => {
    await rm(imagesDir, { recursive: true, force: true });
  });

  it('imports an archive under a name, lists it, and says how a sandbox reaches it', async () => {
    const imported = await cli([
      'images',
      'import',
      built.archive,
      '--name',
      'swebench/sweb.eval.x86_64.cli:v1',
      '--images',
      imagesDir,
    ]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/^imported sweb\.eval\.x86_64\.cli: sha256:[0-9a-f]{64}\n/);
    const listed = await cli(['images', 'list'], { VEFAAS_LOCAL_IMAGES_DIR: imagesDir });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^sweb\.eval\.x86_64\.cli\tsha256:[0-9a-f]{64}\t\d+ MB\t/);
  }, 60_000);

  it('exits 2 without an images directory, 3 for a source that is no image', async () => {
    const nowhere = await cli(['images', 'import', built.archive]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('say where: --images DIR');
    const missing = await cli(['images', 'import', join(imagesDir, 'nope.tar'), '--images', imagesDir]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/nope\.tar: no such file or directory/);
    const help = await cli(['images', 'import', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes: 0 imported, 2 usage, 3 bad source or name, 4 skopeo\/umoci missing/);
  }, 60_000);
});
