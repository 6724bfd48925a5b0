/**
 * Sandboxes of imported images built here (test-kit's test-images.ts): the sandbox sees the image, not the host.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import {
  RECIPES,
  imageToolsNeed,
  importTestImage,
  startImageSandbox,
  type ImageSandbox,
  type ImportedFixture,
} from '../../test/image-fixture.js';

/** Output of one command in session `s`. */
async function out(sb: ImageSandbox, command: string): Promise<string> {
  return String((await sb.rex.run('s', command)).output);
}

describeWith([bwrapNeed(), imageToolsNeed()], 'a sandbox of an imported image', () => {
  let python: ImportedFixture;
  let bare: ImportedFixture;
  beforeAll(async () => {
    python = await importTestImage(RECIPES.python);
    bare = await importTestImage(RECIPES.bare);
  }, 240_000);
  afterAll(async () => {
    await python?.cleanup();
    await bare?.cleanup();
  });

  it("shows the image's /etc/os-release, python3, pytest and Env, not the host's", async () => {
    const sb = await startImageSandbox(python.imagesDir, `registry.example/x/${RECIPES.python.name}:v1`);
    try {
      await sb.rex.createSession('s');
      expect(await out(sb, 'cat /etc/os-release')).toContain(`ID=${RECIPES.python.name}`);
      expect(readFileSync('/etc/os-release', 'utf8')).not.toContain(RECIPES.python.name);
      expect((await out(sb, 'command -v python3 pytest flake8')).trim().split('\n')).toEqual([
        '/opt/py/bin/python3',
        '/opt/py/bin/pytest',
        '/opt/py/bin/flake8',
      ]);
      expect(await out(sb, 'python3 --version')).toMatch(/^Python 3\.\d+\.\d+/);
      expect((await out(sb, 'python3 -c "import sys; print(sys.prefix)"')).trim()).toBe('/opt/py');
      // The host's /usr is nowhere on the image's paths: no /usr/bin/python3 in this image.
      expect(await out(sb, 'ls /usr/bin/python3 2>&1; echo $PATH; pwd')).toContain('No such file');
      expect((await out(sb, 'echo $PATH; pwd')).trim().split('\n')).toEqual(['/opt/py/bin:/usr/bin:/bin', '/testbed']);
      expect(await out(sb, 'cd /testbed && pytest -q test_ok.py 2>&1 | tail -1')).toMatch(/1 passed/);
    } finally {
      await sb.close();
    }
  });

  it('serves every SWE-ReX call on an image without Python, its Env applied', async () => {
    const sb = await startImageSandbox(bare.imagesDir, RECIPES.bare.name);
    try {
      expect((await sb.rex.sh('command -v python3 python || echo none')).trim()).toBe('none');
      await sb.rex.createSession('s');
      expect((await out(sb, 'echo $IMAGE_VAR; echo $HOME; id -u')).trim().split('\n')).toEqual([
        'from-image',
        '/root',
        '0',
      ]);
      await sb.rex.ok('/write_file', { path: '/root/note.txt', content: 'written\n' });
      expect((await sb.rex.ok('/read_file', { path: '/root/note.txt' })).content).toBe('written\n');
      // The image's own files are writable in this sandbox (its writable layer) and stay as they are in the tree.
      await sb.rex.sh('echo changed > /etc/os-release && rm /bin/cat');
      expect(await sb.rex.sh('busybox cat /etc/os-release')).toBe('changed\n');
      const tree = bare.result.image.rootfs;
      expect(readFileSync(join(tree, 'etc/os-release'), 'utf8')).toContain(`ID=${RECIPES.bare.name}`);
      expect(statSync(join(tree, 'bin/busybox')).isFile()).toBe(true);
      await sb.rex.closeSession('s');
    } finally {
      await sb.close();
    }
  });
});
