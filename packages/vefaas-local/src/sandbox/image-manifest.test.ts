// Where an image's repository is mounted (.rollout-fleet-image.json), and that the manifest stays out of the repository.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapArgs } from './bwrap-args.js';
import { buildImage } from './image-build.js';
import { IMAGE_MANIFEST, isUsableRepoDir, readImageManifest } from './image-manifest.js';
import { stateLayout } from './jail-layout.js';

const root = mkdtempSync(join(tmpdir(), 'rf-manifest-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function image(name: string, manifest?: string): string {
  const dir = join(root, name);
  execFileSync('mkdir', ['-p', dir]);
  writeFileSync(join(dir, 'a.py'), 'x = 1\n');
  if (manifest !== undefined) writeFileSync(join(dir, IMAGE_MANIFEST), manifest);
  return dir;
}

describe('image manifest', () => {
  it('defaults to /testbed and reads repo_dir', () => {
    expect(readImageManifest(image('plain'))).toEqual({ repoDir: '/testbed' });
    expect(readImageManifest(image('swe', '{"repo_dir": "/SWE-agent__test-repo"}'))).toEqual({
      repoDir: '/SWE-agent__test-repo',
    });
  });

  it("reads auth_token (the image's own SWE-ReX token) and refuses an unusable one", () => {
    expect(readImageManifest(image('baked', '{"auth_token": "baked-in"}'))).toEqual({
      repoDir: '/testbed',
      authToken: 'baked-in',
    });
    expect(readImageManifest(image('both', '{"repo_dir": "/r", "auth_token": "t"}'))).toEqual({
      repoDir: '/r',
      authToken: 't',
    });
    for (const bad of ['""', '"a b"', '7'])
      expect(() => readImageManifest(image(`bad-token-${bad.length}`, `{"auth_token": ${bad}}`))).toThrow(
        /auth_token must be a non-empty string without spaces/,
      );
  });

  it("reads bashrc (the image's /root/.bashrc) and refuses one that is not text", () => {
    expect(readImageManifest(image('rc', '{"bashrc": "export A=1\\n"}'))).toEqual({
      repoDir: '/testbed',
      bashrc: 'export A=1\n',
    });
    expect(() => readImageManifest(image('bad-rc', '{"bashrc": ["x"]}'))).toThrow(/bashrc must be a string/);
  });

  it('refuses a manifest that is not JSON or names a jail path, saying which file and why', () => {
    expect(() => readImageManifest(image('bad', '{repo_dir'))).toThrow(/\.rollout-fleet-image\.json: not JSON/);
    expect(() => readImageManifest(image('tmp', '{"repo_dir": "/tmp/x"}'))).toThrow(
      /repo_dir must be an absolute path outside .*got "\/tmp\/x"/,
    );
    for (const bad of ['relative', '/', '/usr/src', '/a/../b', '/a/', '/root'])
      expect(isUsableRepoDir(bad)).toBe(false);
    for (const good of ['/testbed', '/SWE-agent__test-repo', '/work/repo']) expect(isUsableRepoDir(good)).toBe(true);
  });

  it('mounts the repository and starts the server at repo_dir', () => {
    const args = bwrapArgs({
      layout: stateLayout('/s', 'sb-1'),
      network: false,
      env: {},
      hostname: 'h',
      tmpfsBytes: 1024,
      tmpfsPerms: true,
      imageSource: '/img',
      repoDir: '/SWE-agent__test-repo',
      command: ['x'],
    });
    expect(args.join(' ')).toContain('--size 1024 --tmpfs /SWE-agent__test-repo');
    expect(args.join(' ')).toContain('--chdir /SWE-agent__test-repo');
    expect(args).not.toContain('/testbed');
  });

  it('is not part of the built repository', async () => {
    const built = await buildImage(image('built', '{"repo_dir": "/r"}'), join(root, 'cache'));
    expect(existsSync(join(built, IMAGE_MANIFEST))).toBe(false);
    expect(readFileSync(join(built, 'a.py'), 'utf8')).toBe('x = 1\n');
    expect(execFileSync('git', ['ls-files'], { cwd: built, encoding: 'utf8' })).toBe('a.py\n');
  });
});
