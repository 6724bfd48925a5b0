#!/usr/bin/env node
/**
 * `npm run build:cli` (also run by `npm ci`/`npm install` as `prepare`): bundles the CLI with esbuild into
 * dist/cli-bundle/, the workspace packages inside, every npm dependency left external (resolved from
 * node_modules at run time). bin/rollout-fleet.js runs this bundle while it is current and falls back to tsx
 * otherwise (see bin/cli-bundle.js). Why: under tsx a worker carries tsx's loader thread, its transformed sources
 * and source maps (an idle `rollout-fleet worker` is ~40 MB larger than the bundle).
 *
 * Files read next to their source at run time (`new URL('./x.lua', import.meta.url)`, tool-bundle/, runtime/)
 * stay where they are: in each bundled source file, `import.meta.url` is replaced by that file's own URL,
 * computed relative to the bundle, so the bundle finds them as long as it lives in this checkout.
 */
import { build } from 'esbuild';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BUNDLE_DIR, inputsOf, manifestPath } from '../bin/cli-bundle.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKSPACE_SCOPE = '@rollout-fleet/';
// --outdir: somewhere else than dist/cli-bundle/ (the tests build their own copy; bin/rollout-fleet.js runs only
// the default one).
const { values } = parseArgs({ options: { outdir: { type: 'string', default: BUNDLE_DIR } } });
const OUT_DIR = resolve(values.outdir);
// The directory is emptied first: never the checkout or anything holding it.
if (!relative(OUT_DIR, ROOT).startsWith('..'))
  throw new Error(`build:cli: --outdir ${OUT_DIR} holds the checkout; name a directory of its own`);

/** npm dependencies stay external; the workspace packages (TypeScript sources) are bundled. */
const externalDependencies = {
  name: 'external-dependencies',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith(WORKSPACE_SCOPE) || args.path.startsWith('node:')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** `import.meta.url` in a bundled file means that file's own location (see the header). */
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return { contents: source, loader: 'ts' };
      const fromBundle = relative(OUT_DIR, args.path).split(sep).join('/');
      const own = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
      return { contents: source.replaceAll('import.meta.url', own), loader: 'ts', resolveDir: dirname(args.path) };
    });
  },
};

await rm(OUT_DIR, { recursive: true, force: true });
const result = await build({
  entryPoints: [join(ROOT, 'cli/main.ts')],
  outdir: OUT_DIR,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Stack traces name the TypeScript file and line (node --enable-source-maps); the map is not loaded otherwise.
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  plugins: [externalDependencies, ownImportMetaUrl],
});
const inputs = inputsOf(Object.keys(result.metafile.inputs).map((input) => join(ROOT, input)));
// Written last: a build that failed half-way leaves no manifest, so no bundle is taken for current.
await writeFile(manifestPath(OUT_DIR), `${JSON.stringify({ inputs }, null, 1)}\n`);
console.log(`build:cli: ${relative(ROOT, OUT_DIR)}/main.js from ${inputs.length} sources`);
