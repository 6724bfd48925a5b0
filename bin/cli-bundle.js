// The built CLI (dist/cli-bundle/, made by scripts/build-cli.mjs) and whether it is current. Plain JavaScript:
// bin/rollout-fleet.js asks this before anything TypeScript can be loaded.
import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUNDLE_DIR = join(ROOT, 'dist', 'cli-bundle');
/** Also inputs: a change to how the bundle is built or checked makes it stale too. */
const BUILD_FILES = ['scripts/build-cli.mjs', 'bin/cli-bundle.js'];

/** The bundle's entry in `dir`. */
export function bundleEntry(dir = BUNDLE_DIR) {
  return join(dir, 'main.js');
}

/** What the bundle in `dir` was built from: every source file esbuild read (its metafile inputs), size and mtime. */
export function manifestPath(dir = BUNDLE_DIR) {
  return join(dir, 'inputs.json');
}

/** Size and mtime of each file and of the build's own files, paths relative to the checkout, for the manifest. */
export function inputsOf(paths) {
  const all = [...paths, ...BUILD_FILES.map((file) => join(ROOT, file))];
  return all.map((path) => {
    const stat = statSync(path);
    return { path: relative(ROOT, path), size: stat.size, mtimeMs: stat.mtimeMs };
  });
}

/**
 * True when the bundle in `dir` exists and none of its sources changed since it was built (same size and mtime: a
 * stat per source, ~1 ms for the CLI's few hundred files). Any doubt (no manifest, a source gone or edited) says
 * false, so a developer editing TypeScript never runs a stale bundle.
 */
export function bundleIsCurrent(dir = BUNDLE_DIR) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath(dir), 'utf8'));
    statSync(bundleEntry(dir));
  } catch {
    return false;
  }
  if (!Array.isArray(manifest.inputs) || manifest.inputs.length === 0) return false;
  for (const input of manifest.inputs) {
    try {
      const stat = statSync(join(ROOT, input.path));
      if (stat.size !== input.size || stat.mtimeMs !== input.mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}
