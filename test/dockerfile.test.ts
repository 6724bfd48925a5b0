/**
 * The Dockerfile installs dependencies in a layer built from the manifests alone (so a source edit does not
 * reinstall them). That layer's `npm ci` must see every workspace's package.json: one it misses is installed
 * from the lockfile without its manifest, and an edit to that manifest would not invalidate the layer.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/pipeline-harness.js';

describe('Dockerfile', () => {
  it('copies every workspace manifest before the dependency install', async () => {
    const dockerfile = await readFile(`${ROOT}/Dockerfile`, 'utf8');
    const { workspaces } = JSON.parse(await readFile(`${ROOT}/package.json`, 'utf8')) as { workspaces: string[] };
    const lines = dockerfile.split('\n');
    const install = lines.findIndex((line) => /^RUN npm ci\b/.test(line));
    expect(install, 'a RUN npm ci line').toBeGreaterThan(0);
    const copied = lines
      .slice(0, install)
      .filter((line) => line.startsWith('COPY '))
      .flatMap((line) => line.trim().split(/\s+/).slice(1, -1));
    expect(workspaces.length).toBeGreaterThan(0);
    for (const workspace of workspaces)
      expect(copied, `COPY ${workspace}/package.json before npm ci`).toContain(`${workspace}/package.json`);
    expect(copied).toContain('package-lock.json');
  });
});
