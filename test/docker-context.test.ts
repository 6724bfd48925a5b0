/**
 * The Docker image holds no test code. The Dockerfile copies the build context (`COPY . .`); the context is the
 * committed files less what .dockerignore excludes, computed here with Docker's own rules (@balena/dockerignore,
 * a port of Docker's matcher): no test file, test kit, fixture or benchmark is in it, and everything the image
 * installs, builds and runs from still is.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import dockerignoreModule from '@balena/dockerignore';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/pipeline-harness.js';
import { isTestCode } from './support/test-code.js';

// Its typings declare an ES default export; its JavaScript is `module.exports = factory`, what Node's default import gives.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;
const committed = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((path) => path !== '');
const context = new Set(
  dockerignore()
    .add(readFileSync(`${ROOT}.dockerignore`, 'utf8'))
    .filter(committed),
);
const { workspaces } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { workspaces: string[] };

/** What the image needs: the CLI and its entry, every package's non-test sources and the files they read at run time. */
const NEEDED =
  /^(cli|bin)\/|^packages\/[^/]+\/src\/|^packages\/vefaas-local\/runtime\/|^packages\/sandbox\/tool-bundle\//;

describe('the Docker build context', () => {
  it('finds the committed files and test code among them (the check below is not vacuous)', () => {
    expect(committed).toContain('Dockerfile');
    expect(committed.filter(isTestCode).length).toBeGreaterThan(100);
  });

  it('holds no test file, test kit, fixture or benchmark', () => {
    expect([...context].filter(isTestCode)).toEqual([]);
  });

  it('holds every manifest the dependency install reads and the build script', () => {
    for (const file of [
      'package.json',
      'package-lock.json',
      'scripts/build-cli.mjs',
      'bin/rollout-fleet.js',
      'bin/cli-bundle.js',
    ])
      expect(context, file).toContain(file);
    for (const workspace of workspaces)
      expect(context, `${workspace}/package.json`).toContain(`${workspace}/package.json`);
  });

  it("holds the CLI, every package's sources other than tests, the sandbox runtime and the tool bundle", () => {
    const needed = committed.filter((path) => NEEDED.test(path) && !isTestCode(path));
    expect(needed.length).toBeGreaterThan(200);
    expect(needed.filter((path) => !context.has(path))).toEqual([]);
    for (const root of ['cli/', 'bin/', 'packages/vefaas-local/runtime/', 'packages/sandbox/tool-bundle/'])
      expect(
        needed.some((path) => path.startsWith(root)),
        root,
      ).toBe(true);
  });
});
