/** Importing images: explicit and implicit, one tree per digest, and the errors a user meets. */
import { cp, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { buildTestImage } from '@rollout-fleet/test-kit/test-images';
import { RECIPES, imageToolsNeed } from '../../test/image-fixture.js';
import { resolveImage } from '../sandbox/resolve-image.js';
import { importImagesIn, pendingImports } from './import-dir.js';
import { ImageImportError, importImage, rmTree } from './import-image.js';
import { IMPORTED_DIR, readImportedImage } from './imported-image.js';

const dirs: string[] = [];
async function imagesDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rf-images-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rmTree(d)));
});

describeWith([imageToolsNeed()], 'images import', () => {
  it('imports archives and OCI layouts found in an images directory, once, and resolves their names', async () => {
    const built = await buildTestImage(RECIPES.bare);
    const dir = await imagesDir();
    await cp(built.archive, join(dir, 'sweb.eval.x86_64.demo.tar'));
    await cp(built.layout, join(dir, 'from-layout'), { recursive: true });
    expect(() => resolveImage('sweb.eval.x86_64.demo', dir)).toThrow(/not imported yet: rollout-fleet images import/);
    expect(() => resolveImage('from-layout', dir)).toThrow(/OCI layout not imported yet/);
    expect((await pendingImports(dir)).map((p) => p.name)).toEqual(['from-layout', 'sweb.eval.x86_64.demo']);
    const results = await importImagesIn(dir);
    expect(results.map((r) => r.name)).toEqual(['from-layout', 'sweb.eval.x86_64.demo']);
    expect(await pendingImports(dir)).toEqual([]);
    const entry = resolveImage('registry.example/swe-bench/sweb.eval.x86_64.demo:v2', dir);
    const image = readImportedImage(entry);
    expect(image?.env).toEqual(RECIPES.bare.config.env);
    expect(image?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(resolveImage('from-layout', dir)).not.toBe(entry);
  }, 120_000);

  it('keys the unpacked tree by manifest digest: a second name of the same image shares it', async () => {
    const built = await buildTestImage(RECIPES.bare);
    const dir = await imagesDir();
    const first = await importImage({ source: built.archive, name: 'one', imagesDir: dir });
    const second = await importImage({ source: `docker-archive:${built.archive}`, name: 'two', imagesDir: dir });
    expect(first.unpacked).toBe(true);
    expect(second.unpacked).toBe(false);
    expect(second.image.dir).toBe(first.image.dir);
    const entries = (await readdir(join(dir, IMPORTED_DIR))).filter((e) => !e.startsWith('.'));
    expect(entries.sort()).toEqual([first.image.digest.slice('sha256:'.length), 'names'].sort());
  }, 120_000);

  it('says what is wrong: a missing source, a bad name, missing tools', async () => {
    const dir = await imagesDir();
    const reason = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (e instanceof ImageImportError ? `${e.reason}: ${e.message}` : String(e)),
      );
    expect(await reason(importImage({ source: '/nonexistent.tar', name: 'x', imagesDir: dir }))).toMatch(
      /^bad-input: .*no such file/,
    );
    expect(await reason(importImage({ source: '/nonexistent.tar', name: '../x', imagesDir: dir }))).toMatch(
      /^bad-input: image name/,
    );
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(await reason(importImage({ source: '/x.tar', name: 'x', imagesDir: dir }))).toBe(
        'tool-missing: skopeo and umoci not found; install with: apt-get install skopeo umoci',
      );
    } finally {
      process.env.PATH = path;
    }
  });
});
