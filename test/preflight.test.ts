/**
 * scripts/preflight.mjs (npm's pretest / predemo on a fresh clone): what it installs, what it only names,
 * and when it runs `npm ci`. The decisions are pure functions; the real lockfiles check the real state.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dependencyState, installPlan, missingPackages, type LockFile } from '../scripts/preflight.mjs';
import { ROOT } from './support/pipeline-harness.js';

const readLock = (path: string): LockFile => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as LockFile;

describe('preflight', () => {
  it('wants bubblewrap, redis-server, redis-cli, chromium and docker-compose for the tests, and no redis-server for a demo given REDIS_URL', () => {
    const nothing = (): boolean => false;
    expect(missingPackages('test', { has: nothing, env: {} })).toEqual([
      'python3',
      'git',
      'patch',
      'bubblewrap',
      'redis-server',
      'redis-tools',
      'chromium',
      'docker-compose',
      'python-is-python3',
      'flake8',
      'python3-pytest',
      'skopeo',
      'umoci',
      'busybox-static',
      'prometheus',
    ]);
    // What sandboxes must find in the host's /usr is looked for there, not on PATH (a pyenv shim is not enough).
    const onlyOnPath = (what: string): boolean => !what.startsWith('/');
    expect(missingPackages('test', { has: onlyOnPath, env: {} })).toEqual([
      'python-is-python3',
      'flake8',
      'python3-pytest',
      'busybox-static',
    ]);
    expect(missingPackages('demo', { has: nothing, env: {} })).toContain('redis-server');
    expect(missingPackages('demo', { has: nothing, env: { REDIS_URL: 'redis://r:6379' } })).not.toContain(
      'redis-server',
    );
    expect(missingPackages('test', { has: (command) => command !== 'chromium', env: {} })).toEqual(['chromium']);
  });

  it('installs with apt-get as root or through passwordless sudo, else names the one command to run', () => {
    const packages = ['bubblewrap', 'chromium'];
    const install = ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'bubblewrap', 'chromium'];
    expect(installPlan(packages, { isRoot: true, canSudo: false, hasAptGet: true })).toEqual({
      run: [['apt-get', 'update', '-qq'], install],
    });
    expect(installPlan(packages, { isRoot: false, canSudo: true, hasAptGet: true })).toEqual({
      run: [
        ['sudo', '-n', 'apt-get', 'update', '-qq'],
        ['sudo', '-n', ...install],
      ],
    });
    expect(installPlan(packages, { isRoot: false, canSudo: false, hasAptGet: true })).toEqual({
      tell: 'missing bubblewrap, chromium; run: sudo apt-get install -y bubblewrap chromium',
    });
    expect(installPlan(packages, { isRoot: true, canSudo: false, hasAptGet: false }).tell).toMatch(
      /^missing bubblewrap, chromium; run: install bubblewrap, chromium with your system's package manager$/,
    );
    expect(installPlan([], { isRoot: true, canSudo: true, hasAptGet: true })).toEqual({});
  });

  it('runs npm ci when node_modules is missing or differs from package-lock.json, not when it matches', () => {
    const lock = readLock('package-lock.json');
    const installed = readLock('node_modules/.package-lock.json');
    expect(dependencyState(lock, installed)).toBe('current');
    expect(dependencyState(lock, undefined)).toBe('missing');
    const [path, entry] =
      Object.entries(installed.packages ?? {}).find(
        ([p, e]) => p.startsWith('node_modules/') && !e.link && e.version,
      ) ?? [];
    expect(path).toBeDefined();
    expect(
      dependencyState(lock, { packages: { ...installed.packages, [path!]: { ...entry, version: '0.0.0-other' } } }),
    ).toBe('stale');
    const { [path!]: _removed, ...without } = installed.packages ?? {};
    expect(dependencyState(lock, { packages: without })).toBe('stale');
  });

  it('is what npm runs before `npm test` and `npm run demo`', () => {
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.pretest).toBe('node scripts/preflight.mjs test');
    expect(scripts.predemo).toBe('node scripts/preflight.mjs demo');
    const usage = spawnSync(process.execPath, [join(ROOT, 'scripts/preflight.mjs'), 'nonsense'], { encoding: 'utf8' });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toBe('preflight: usage: node scripts/preflight.mjs demo|test\n');
  });
});
