/** Reading an image's tree and config as a container runtime does, without starting anything. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportedImage } from '../images/imported-image.js';
import { imageEnv, resolveImageUser, resolveInImage, whichInImage } from './image-root.js';

let rootfs: string;
const image = (fields: Partial<ImportedImage>): ImportedImage => ({
  dir: rootfs,
  rootfs,
  digest: 'sha256:0',
  configDigest: '',
  env: [],
  workingDir: '',
  user: '',
  source: 'test',
  bytes: 0,
  importedAt: '',
  ...fields,
});

beforeAll(async () => {
  rootfs = await mkdtemp(join(tmpdir(), 'rf-rootfs-'));
  await mkdir(join(rootfs, 'usr/bin'), { recursive: true });
  await mkdir(join(rootfs, 'etc'));
  await symlink('usr/bin', join(rootfs, 'bin'));
  await writeFile(join(rootfs, 'usr/bin/bash'), '#!/bin/sh\n', { mode: 0o755 });
  await writeFile(join(rootfs, 'usr/bin/notexec'), '', { mode: 0o644 });
  // An absolute symlink points into the image, never at the host's file of that name.
  await symlink('/usr/bin/bash', join(rootfs, 'usr/bin/sh'));
  await symlink('/etc/passwd', join(rootfs, 'etc/escape'));
  await writeFile(
    join(rootfs, 'etc/passwd'),
    'root:x:0:0:root:/root:/bin/bash\ndev:x:1000:1001::/home/dev:/bin/bash\n',
  );
  await writeFile(join(rootfs, 'etc/group'), 'root:x:0:\ndev:x:1001:\nstaff:x:50:\n');
});
afterAll(async () => {
  await rm(rootfs, { recursive: true, force: true });
});

describe('an image tree read from the host', () => {
  it('resolves symlinks inside the image, absolute ones included', () => {
    expect(resolveInImage(rootfs, '/bin/sh')).toBe('/usr/bin/bash');
    expect(resolveInImage(rootfs, '/etc/escape')).toBe('/etc/passwd');
    // `..` after a symlink is the parent of where it led (/bin → /usr/bin, so /bin/.. is /usr), and never above /.
    expect(resolveInImage(rootfs, '/bin/../bin/bash')).toBe('/usr/bin/bash');
    expect(resolveInImage(rootfs, '/bin/../etc/passwd')).toBeNull();
    expect(resolveInImage(rootfs, '/../../etc/passwd')).toBe('/etc/passwd');
    expect(resolveInImage(rootfs, '/nope')).toBeNull();
  });

  it("finds executables on the image's PATH only", () => {
    expect(whichInImage(rootfs, '/opt/none:/bin', 'bash')).toBe('/bin/bash');
    expect(whichInImage(rootfs, '/bin', 'notexec')).toBeNull();
    expect(whichInImage(rootfs, 'relative:/usr/local/bin', 'bash')).toBeNull();
  });

  it('reads User as runtimes do: names and numbers, with the group and HOME from the image', () => {
    expect(resolveImageUser(image({}))).toEqual({ uid: 0, gid: 0, home: '/root' });
    expect(resolveImageUser(image({ user: 'dev' }))).toEqual({ uid: 1000, gid: 1001, home: '/home/dev' });
    expect(resolveImageUser(image({ user: 'dev:staff' }))).toEqual({ uid: 1000, gid: 50, home: '/home/dev' });
    expect(resolveImageUser(image({ user: '4242' }))).toEqual({ uid: 4242, gid: 4242, home: '/' });
    expect(() => resolveImageUser(image({ user: 'ghost' }))).toThrow(/not in the image's \/etc\/passwd/);
  });

  it('takes Env in order (later wins) and defaults PATH as runtimes do', () => {
    expect(imageEnv(image({ env: ['A=1', 'A=2', 'B=x=y'] }))).toEqual({
      A: '2',
      B: 'x=y',
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    });
    expect(imageEnv(image({ env: ['PATH=/opt/conda/bin:/usr/bin'] })).PATH).toBe('/opt/conda/bin:/usr/bin');
  });
});
