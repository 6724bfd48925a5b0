/**
 * The built CLI (scripts/build-cli.mjs → dist/cli-bundle/, what bin/rollout-fleet.js runs while it is current):
 * it answers `worker --help`, a bundled `rollout-fleet worker` runs an episode end to end (the Lua scripts,
 * tool bundle and runtime files it reads next to their sources are found from the bundle), the worker loads no
 * dashboard (express, bull-board), the staleness check refuses a bundle whose sources changed, and no test file
 * or test kit is among its sources.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTestCode } from './support/test-code.js';
import {
  ROOT,
  childEnv,
  cloudEnvFor,
  collectResults,
  configOf,
  episode,
  openPipeline,
  startHost,
  runNode,
  stopChild,
  testEnv,
  type CliRun,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

interface CliBundle {
  bundleEntry(dir?: string): string;
  bundleIsCurrent(dir?: string): boolean;
  manifestPath(dir?: string): string;
  inputsOf(paths: string[]): Array<{ path: string; size: number; mtimeMs: number }>;
}
const cliBundle = (await import(pathToFileURL(join(ROOT, 'bin/cli-bundle.js')).href)) as CliBundle;

function run(args: string[], env: NodeJS.ProcessEnv = childEnv({})): Promise<CliRun> {
  return runNode(args, { env });
}

describe('the built CLI', () => {
  let dir: string;
  let bundle: string;

  beforeAll(async () => {
    // Its own copy, one directory deeper than dist/cli-bundle/ (so the relative paths to the files read at run time
    // are not the default ones), inside the checkout (npm dependencies are resolved from its node_modules).
    await mkdir(join(ROOT, 'dist'), { recursive: true });
    dir = await mkdtemp(join(ROOT, 'dist', 'cli-bundle-test-'));
    bundle = join(dir, 'bundle');
    const built = await run([join(ROOT, 'scripts/build-cli.mjs'), '--outdir', bundle]);
    expect(built.code, built.stderr).toBe(0);
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is current right after the build and answers `worker --help`', async () => {
    expect(cliBundle.bundleIsCurrent(bundle)).toBe(true);
    const help = await run([cliBundle.bundleEntry(bundle), 'worker', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('Usage: rollout-fleet worker [options]');
  });

  it('is built from no test file, test kit or fixture (its esbuild metafile inputs, as the manifest lists them)', async () => {
    const { inputs } = JSON.parse(await readFile(cliBundle.manifestPath(bundle), 'utf8')) as {
      inputs: Array<{ path: string }>;
    };
    const paths = inputs.map((input) => input.path);
    expect(paths).toContain('cli/main.ts');
    expect(paths.filter((path) => isTestCode(path) || path.startsWith('packages/test-kit/'))).toEqual([]);
  });

  describe('a bundled worker', () => {
    let host: Host;
    let env: Record<string, string>;
    let pipeline: Pipeline;

    beforeAll(async () => {
      host = await startHost({ isolation: 'emulated' });
      env = { ...testEnv(), ...cloudEnvFor(host.handle) };
      pipeline = openPipeline(configOf(env));
    });

    afterAll(async () => {
      await pipeline?.close();
      await host?.close();
    });

    it('submits and runs an episode to a committed result, and never loads the dashboard', async () => {
      const runId = 'bundled';
      const episodes = join(dir, 'episodes.jsonl');
      await writeFile(episodes, `${JSON.stringify(episode(runId, 'e1'))}\n${JSON.stringify(episode(runId, 'e2'))}\n`);
      const submitted = await run([cliBundle.bundleEntry(bundle), 'submit', episodes, '--run', runId], childEnv(env));
      expect(submitted.code, submitted.stderr).toBe(0);

      const imports = join(dir, 'worker-imports.txt');
      const worker = spawn(
        process.execPath,
        ['--import', join(ROOT, 'test/support/record-imports.mjs'), cliBundle.bundleEntry(bundle), 'worker'],
        {
          env: childEnv({ ...env, RECORD_IMPORTS_TO: imports }),
          stdio: ['ignore', 'ignore', 'pipe'],
          cwd: ROOT,
        },
      );
      let log = '';
      worker.stderr.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
      try {
        const results = await collectResults(pipeline, runId, 2);
        expect(results.map((r) => [r.episode_id, r.status]).sort(), log).toEqual([
          ['e1', 'completed'],
          ['e2', 'completed'],
        ]);
      } finally {
        await stopChild(worker);
      }
      const loaded = (await readFile(imports, 'utf8')).split('\n');
      // The recorder works: the worker's own modules and its queue library are in the list.
      expect(loaded).toContain(pathToFileURL(cliBundle.bundleEntry(bundle)).href);
      expect(loaded.some((url) => url.includes('/node_modules/bullmq/'))).toBe(true);
      expect(loaded.filter((url) => /\/node_modules\/(express|@bull-board)\//.test(url))).toEqual([]);
    });
  });

  it('is stale once a source it was built from changes, disappears or was never recorded', async () => {
    const fake = join(dir, 'fake');
    const source = join(dir, 'source.ts');
    await writeFile(source, 'export const a = 1;\n');
    await rm(fake, { recursive: true, force: true });
    await mkdir(fake);
    expect(cliBundle.bundleIsCurrent(fake)).toBe(false); // no manifest, no bundle
    await writeFile(cliBundle.bundleEntry(fake), '');
    expect(cliBundle.bundleIsCurrent(fake)).toBe(false); // still no manifest
    await writeFile(cliBundle.manifestPath(fake), JSON.stringify({ inputs: cliBundle.inputsOf([source]) }));
    expect(cliBundle.bundleIsCurrent(fake)).toBe(true);

    // Same size, new mtime (an edit that kept the length).
    await writeFile(source, 'export const b = 1;\n');
    const later = new Date(Date.now() + 5_000);
    await utimes(source, later, later);
    expect(cliBundle.bundleIsCurrent(fake)).toBe(false);

    await writeFile(cliBundle.manifestPath(fake), JSON.stringify({ inputs: cliBundle.inputsOf([source]) }));
    expect(cliBundle.bundleIsCurrent(fake)).toBe(true);
    await writeFile(source, 'export const b = 12;\n', { flag: 'w' });
    await utimes(source, later, later); // same mtime, new size
    expect(cliBundle.bundleIsCurrent(fake)).toBe(false);

    await writeFile(cliBundle.manifestPath(fake), JSON.stringify({ inputs: cliBundle.inputsOf([source]) }));
    await rm(source);
    expect(cliBundle.bundleIsCurrent(fake)).toBe(false);

    await writeFile(cliBundle.manifestPath(fake), JSON.stringify({ inputs: [] }));
    expect(cliBundle.bundleIsCurrent(fake)).toBe(false);
  });
});
