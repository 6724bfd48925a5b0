/**
 * Sandboxes of imported images built here (test-kit's test-images.ts): the sandbox sees the image, not the host.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TOOL_INSTALL_COMMAND } from '@rollout-fleet/sandbox';
import { RolloutError } from '@rollout-fleet/shared';
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

/** Where installToolBundle puts the tools (packages/sandbox/src/tools/bundle-paths.ts). */
const TOOL_DIR = TOOL_INSTALL_COMMAND.match(/chmod \+x (\S+)\/\*/)?.[1] ?? '/nonexistent';

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
      await sb.rex.sh(`mkdir -p ${TOOL_DIR} && touch ${TOOL_DIR}/tool`);
      expect((await sb.rex.run('s', TOOL_INSTALL_COMMAND, { check: 'silent' })).exit_code).toBe(0);
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
      // The tool bundle's scripts run with the image's python3: without one, their install says why it fails.
      await sb.rex.sh(`mkdir -p ${TOOL_DIR} && touch ${TOOL_DIR}/tool`);
      const install = await sb.rex.run('s', TOOL_INSTALL_COMMAND, { check: 'silent' });
      expect(install.exit_code).not.toBe(0);
      expect(String(install.output)).toMatch(
        /the tools need python3 on the image's PATH \(\/usr\/bin:\/bin\); this image has none/,
      );
      await sb.rex.closeSession('s');
    } finally {
      await sb.close();
    }
  });

  for (const layer of ['overlay', 'copy-up'] as const) {
    it(`is jailed as a directory sandbox is: no writable host mount, no host path or token to read (${layer})`, async () => {
      const sb = await startImageSandbox(bare.imagesDir, RECIPES.bare.name, { imageLayer: layer });
      try {
        const stateRoot = dirname(sb.sandbox.stateDir);
        // mountinfo: mount id, parent, dev, root, mount point, options, optional fields, -, type, source, super.
        const mounts = (await sb.rex.sh('cat /proc/self/mountinfo'))
          .trim()
          .split('\n')
          .map((line) => {
            const [pre = '', post = ''] = line.split(' - ');
            const f = pre.split(' ');
            return {
              line,
              root: f[3],
              point: f[4],
              rw: (f[5] ?? '').split(',').includes('rw'),
              type: post.split(' ')[0],
            };
          });
        // Writable: tmpfs and proc, the device nodes bwrap binds into /dev, and (overlay) the root over a tmpfs
        // upper layer. The server's socket directory used to be a writable bind of the host's disk here.
        const writable = mounts.filter((m) => m.rw && m.type !== 'tmpfs' && m.type !== 'proc');
        for (const m of writable)
          expect(m.point === '/' ? m.type : `${m.point} ${m.type}`).toMatch(
            layer === 'overlay' ? /^(overlay|\/dev\/\S+ \S+)$/ : /^\/dev\/\S+ \S+$/,
          );
        // Read-only binds of the generated /etc files are the only mounts naming the state directory: no writable
        // one does (the overlay's options name its layers relative to it).
        expect(mounts.filter((m) => m.rw && m.line.includes(stateRoot))).toEqual([]);
        // No argv or environment of any process in the jail (bwrap's pid-1 reaper keeps bwrap's argv) names the
        // state root, nor carries the token.
        const seen = await sb.rex.sh('cat /proc/[0-9]*/cmdline /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"');
        expect(seen).toContain('--socket-fd');
        expect(seen).not.toContain(stateRoot);
        expect(seen).not.toContain(sb.sandbox.authToken);
      } finally {
        await sb.close();
      }
    });
  }
});

describeWith([bwrapNeed(), imageToolsNeed()], 'a layered image', () => {
  let layered: ImportedFixture;
  beforeAll(async () => {
    layered = await importTestImage(RECIPES.layered);
  }, 240_000);
  afterAll(async () => {
    await layered?.cleanup();
  });

  for (const layer of ['overlay', 'copy-up'] as const) {
    it(`comes out as its layers define it, run as its User in its WorkingDir (${layer})`, async () => {
      const sb = await startImageSandbox(layered.imagesDir, RECIPES.layered.name, { imageLayer: layer });
      try {
        await sb.rex.createSession('s');
        // Whiteouts: the file and the directory deleted by layer 2 are gone; the file replaced by a symlink is one.
        expect(await out(sb, 'ls -1 /data')).toBe('abs\nagain\nhard.txt\nkeep.txt\nreplaced\n');
        expect(await out(sb, 'ls -1 /data/again')).toBe('new.txt\n');
        expect(await out(sb, 'readlink /data/replaced; readlink /data/abs')).toBe('keep.txt\n/data/keep.txt\n');
        expect(await out(sb, 'cat /data/abs /data/replaced')).toBe('kept\nkept\n');
        // Hard links stay one file; modes are the image's.
        const [keep, hard] = (await out(sb, 'stat -c %i /data/keep.txt /data/hard.txt')).trim().split('\n');
        expect(keep).toBe(hard);
        expect(await out(sb, 'stat -c %a /data/keep.txt /work/script.sh')).toBe('640\n755\n');
        // User "runner" (1234 in the image's passwd), its HOME, the WorkingDir.
        expect(await out(sb, 'id -u; id -g; echo $HOME; pwd')).toBe('1234\n1234\n/home/runner\n/work\n');
        expect(await out(sb, './script.sh && echo ok > /home/runner/x && cat /home/runner/x')).toBe(
          'from-script\nok\n',
        );
      } finally {
        await sb.close();
      }
    });
  }
});

describeWith([bwrapNeed(), imageToolsNeed()], 'what an image needs', () => {
  it('fails the start with function_initialize_failed when the image has no bash', async () => {
    const noBash = await importTestImage(RECIPES.noBash);
    try {
      const err = await startImageSandbox(noBash.imagesDir, RECIPES.noBash.name).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RolloutError);
      expect((err as RolloutError).code).toBe('SANDBOX_START_FAILED');
      expect((err as RolloutError).message).toMatch(/has no bash on its PATH/);
      expect((err as RolloutError).details?.errorCode).toBe('function_initialize_failed');
    } finally {
      await noBash.cleanup();
    }
  });
});
