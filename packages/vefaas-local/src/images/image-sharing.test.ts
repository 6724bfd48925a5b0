/** Sandboxes of one imported image share its unpacked tree; each writes only to its own bounded layer. */
import { statSync } from 'node:fs';
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
import { treeBytes } from './import-image.js';

const SANDBOXES = 50;
// 50 interpreters starting at once on a small shared machine take a while; the test is about sharing, not speed.

describeWith([bwrapNeed(), imageToolsNeed()], 'one imported image, many sandboxes', () => {
  let bare: ImportedFixture;
  beforeAll(async () => {
    bare = await importTestImage(RECIPES.bare);
  }, 240_000);
  afterAll(async () => {
    await bare?.cleanup();
  });

  it(`${SANDBOXES} concurrent sandboxes read the one unpacked tree (same inode) and copy nothing`, async () => {
    const tree = bare.result.image.rootfs;
    const host = statSync(join(tree, 'bin/busybox'));
    const bytesBefore = await treeBytes(bare.imagesDir);
    const sandboxes: ImageSandbox[] = [];
    try {
      const started = await Promise.allSettled(
        Array.from({ length: SANDBOXES }, () => startImageSandbox(bare.imagesDir, RECIPES.bare.name, {}, 240_000)),
      );
      for (const s of started) if (s.status === 'fulfilled') sandboxes.push(s.value);
      expect(started.filter((s) => s.status === 'rejected')).toEqual([]);
      const seen = await Promise.all(sandboxes.map((sb) => sb.rex.sh('stat -c %i:%s /bin/busybox')));
      expect(new Set(seen)).toEqual(new Set([`${host.ino}:${host.size}\n`]));
      // Each writes its own file; the others and the tree do not see it.
      await Promise.all(sandboxes.map((sb, i) => sb.rex.sh(`echo ${i} > /etc/mine`)));
      const mine = await Promise.all(sandboxes.map((sb) => sb.rex.sh('cat /etc/mine')));
      expect(mine).toEqual(sandboxes.map((_, i) => `${i}\n`));
      expect(await treeBytes(bare.imagesDir)).toBe(bytesBefore);
      // No sandbox keeps anything of the image on the host's disk: its state directory holds sockets and logs.
      for (const sb of sandboxes) expect(await treeBytes(sb.sandbox.stateDir)).toBeLessThan(64 * 1024);
    } finally {
      await Promise.all(sandboxes.map((sb) => sb.close()));
    }
  }, 300_000);

  for (const layer of ['overlay', 'copy-up'] as const) {
    it(`bounds the writable layer by the disk limit (${layer})`, async () => {
      const sb = await startImageSandbox(bare.imagesDir, RECIPES.bare.name, { diskMB: 8, imageLayer: layer });
      try {
        const full = await sb.rex.execute('dd if=/dev/zero of=/root/big bs=1M count=16 2>&1');
        expect(full.exit_code).not.toBe(0);
        expect(String(full.stdout)).toMatch(/No space left on device/);
        // What was written stays in the sandbox's memory-backed layer, not on the host's disk.
        expect(await treeBytes(sb.sandbox.stateDir)).toBeLessThan(64 * 1024);
        await sb.rex.sh('rm /root/big && echo again > /root/small');
        expect(await sb.rex.sh('cat /root/small')).toBe('again\n');
      } finally {
        await sb.close();
      }
    });
  }
});
