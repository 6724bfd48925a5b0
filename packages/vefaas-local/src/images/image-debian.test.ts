/**
 * Opt-in (RF_DEBIAN_IMAGE_TEST=1; needs mmdebstrap and Debian's mirror, ~5 min to build the first time): a Debian
 * image made by mmdebstrap with Debian's python3, pytest and flake8. The sandbox runs the image's own files: its
 * python3 is the tree's inode, and what only the host has (node, skopeo) is not there. CI runs the busybox-based
 * image tests instead (image-sandbox.test.ts), which build in seconds.
 */
import { existsSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { debianImageToolsMissing, type TestImageRecipe } from '@rollout-fleet/test-kit/test-images';
import { importTestImage, startImageSandbox, type ImportedFixture } from '../../test/image-fixture.js';

const DEBIAN: TestImageRecipe = {
  name: 'rf-debian',
  debian: { suite: 'bookworm', include: ['python3', 'python3-pytest', 'flake8'] },
  layers: [{ files: { '/testbed/test_ok.py': 'def test_ok():\n    assert True\n' } }],
  config: { env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], workingDir: '/testbed' },
};

const wanted = process.env.RF_DEBIAN_IMAGE_TEST === '1';
const missing = debianImageToolsMissing();

describe.skipIf(!wanted || missing !== undefined)('a Debian image built by mmdebstrap (opt-in)', () => {
  let debian: ImportedFixture;
  beforeAll(async () => {
    debian = await importTestImage(DEBIAN);
  }, 900_000);
  afterAll(async () => {
    await debian?.cleanup();
  });

  it("runs the image's Debian python3, pytest and flake8, and nothing only the host has", async () => {
    const sb = await startImageSandbox(debian.imagesDir, DEBIAN.name);
    try {
      await sb.rex.createSession('s');
      const run = async (command: string) => String((await sb.rex.run('s', command)).output);
      expect(await run('. /etc/os-release && echo $ID $VERSION_CODENAME')).toBe('debian bookworm\n');
      expect(await run('command -v python3 pytest flake8')).toBe(
        '/usr/bin/python3\n/usr/bin/pytest\n/usr/bin/flake8\n',
      );
      // python3 → python3.11 in the image: the sandbox's file is the tree's (same inode), not the host's.
      const rootfs = debian.result.image.rootfs;
      const tree = statSync(join(rootfs, 'usr/bin', readlinkSync(join(rootfs, 'usr/bin/python3'))));
      expect(await run('stat -L -c %i /usr/bin/python3')).toBe(`${tree.ino}\n`);
      // skopeo is on this host, and not in the image.
      expect(existsSync('/usr/bin/skopeo')).toBe(true);
      expect(await run('test -e /usr/bin/skopeo || echo absent')).toBe('absent\n');
      expect(await run('pytest -q test_ok.py 2>&1 | tail -1')).toMatch(/1 passed/);
      expect(await run('flake8 --version | head -1')).toMatch(/^\d+\.\d+/);
    } finally {
      await sb.close();
    }
  });
});
