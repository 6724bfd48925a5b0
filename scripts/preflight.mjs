#!/usr/bin/env node
/**
 * `npm test` and `npm run demo` on a fresh clone: npm runs this first (`pretest`, `predemo`). It makes sure
 * of what the command needs and says in one line what it cannot do itself:
 * - Node new enough;
 * - dependencies installed and current (`npm ci` when node_modules is missing or differs from package-lock.json);
 * - system programs (NEEDS below: the one list of what the tests and the demo need, which CI installs too), installed
 *   with apt-get when running as root or with passwordless sudo, otherwise named in one line with the command.
 * Dependency-free on purpose: it runs before node_modules exist. It never fails the command itself; what is
 * still missing is reported by the demo or by the tests that need it (they fail under CI=true).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MIN_NODE = [20, 19];

/** What each command needs from the system: program on PATH → Debian package. */
export const NEEDS = {
  demo: [
    { command: 'python3', pkg: 'python3' },
    { command: 'git', pkg: 'git' },
    { command: 'patch', pkg: 'patch' },
    // Optional for the demo (it runs its bundled examples without isolation otherwise), but wanted.
    { command: 'bwrap', pkg: 'bubblewrap' },
    { command: 'redis-server', pkg: 'redis-server', unlessEnv: 'REDIS_URL' },
  ],
  test: [
    { command: 'python3', pkg: 'python3' },
    { command: 'git', pkg: 'git' },
    { command: 'patch', pkg: 'patch' },
    { command: 'bwrap', pkg: 'bubblewrap' },
    { command: 'redis-server', pkg: 'redis-server' },
    { command: 'redis-cli', pkg: 'redis-tools' },
    { command: 'chromium', pkg: 'chromium' },
    // Validates docker-compose.yml offline (`docker-compose config`).
    { command: 'docker-compose', pkg: 'docker-compose' },
    // Replayed SWE-agent runs call `python` and lint with flake8 inside directory-image sandboxes, which see the
    // host's /usr only: these must be in /usr/bin, whatever else is on PATH (a pyenv shim is not).
    { command: 'python', pkg: 'python-is-python3', at: '/usr/bin/python' },
    { command: 'flake8', pkg: 'flake8', at: '/usr/bin/flake8' },
    // docs/grading.md's pytest example (test/first-episode.e2e.test.ts) runs pytest inside sandboxes.
    { command: 'pytest', pkg: 'python3-pytest', at: '/usr/bin/pytest' },
    // Container images: import (skopeo, umoci) and the test images built from a static busybox.
    { command: 'skopeo', pkg: 'skopeo' },
    { command: 'umoci', pkg: 'umoci' },
    { command: 'busybox', pkg: 'busybox-static', at: '/bin/busybox' },
    // deploy/prometheus/alerts.yml is checked and unit-tested with promtool.
    { command: 'promtool', pkg: 'prometheus' },
  ],
};

function say(line) {
  console.error(`preflight: ${line}`);
}

/** Whether a need is met: an absolute path (`at`) must exist and be executable; a command must be on PATH. */
export function present(commandOrPath) {
  if (!commandOrPath.startsWith('/')) return onPath(commandOrPath);
  try {
    accessSync(commandOrPath, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function onPath(command, path = process.env.PATH ?? '') {
  return path.split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Debian packages to install for `purpose`, given which commands exist. */
export function missingPackages(purpose, { has = present, env = process.env } = {}) {
  const packages = NEEDS[purpose]
    .filter((need) => !(need.unlessEnv && env[need.unlessEnv]))
    .filter((need) => !has(need.at ?? need.command))
    .map((need) => need.pkg);
  return [...new Set(packages)];
}

/**
 * How to get `packages`: run apt-get (as root, or through passwordless sudo) or tell the person the command.
 * Returns { run: [argv…] } or { tell: 'one line' } or {} when nothing is missing.
 */
export function installPlan(packages, { isRoot, canSudo, hasAptGet }) {
  if (packages.length === 0) return {};
  const install = ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages];
  if (hasAptGet && (isRoot || canSudo)) {
    const prefix = isRoot ? [] : ['sudo', '-n'];
    return {
      run: [
        [...prefix, 'apt-get', 'update', '-qq'],
        [...prefix, ...install],
      ],
    };
  }
  const how = hasAptGet
    ? `sudo apt-get install -y ${packages.join(' ')}`
    : `install ${packages.join(', ')} with your system's package manager`;
  return { tell: `missing ${packages.join(', ')}; run: ${how}` };
}

/**
 * Whether node_modules matches package-lock.json: 'missing' (no install), 'stale' (a locked package absent
 * or at another version) or 'current'. npm writes node_modules/.package-lock.json on every install.
 */
export function dependencyState(lock, installed) {
  if (installed === undefined) return 'missing';
  const have = installed.packages ?? {};
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path.startsWith('node_modules/') || entry.optional || entry.peer) continue;
    const got = have[path];
    if (got === undefined) return 'stale';
    if (!entry.link && got.version !== entry.version) return 'stale';
  }
  return 'current';
}

function readJson(path) {
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined;
}

function run(argv, options = {}) {
  return spawnSync(argv[0], argv.slice(1), { stdio: 'inherit', cwd: ROOT, ...options }).status === 0;
}

function checkNode() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major < MIN_NODE[0] || (major === MIN_NODE[0] && minor < MIN_NODE[1])) {
    say(
      `Node ${process.versions.node} is older than ${MIN_NODE.join('.')}; install Node ${MIN_NODE[0]} LTS (https://nodejs.org) and run again`,
    );
  }
}

function ensureDependencies() {
  const state = dependencyState(
    readJson(join(ROOT, 'package-lock.json')) ?? {},
    readJson(join(ROOT, 'node_modules/.package-lock.json')),
  );
  if (state === 'current') return;
  say(`dependencies ${state === 'missing' ? 'not installed' : 'differ from package-lock.json'}; running npm ci`);
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  if (!run([...npm, 'ci', '--no-audit', '--no-fund'])) say('npm ci failed (see above); fix that and run again');
}

function ensureSystem(purpose) {
  const packages = missingPackages(purpose);
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const canSudo = !isRoot && onPath('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  const plan = installPlan(packages, { isRoot, canSudo, hasAptGet: onPath('apt-get') });
  if (plan.tell) say(plan.tell);
  if (!plan.run) return;
  say(`installing ${packages.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!plan.run.every((argv) => run(argv, { env })))
    say(`apt-get could not install ${packages.join(', ')}; run: sudo apt-get install -y ${packages.join(' ')}`);
}

export function main(purpose) {
  if (!(purpose in NEEDS)) {
    say(`usage: node scripts/preflight.mjs ${Object.keys(NEEDS).join('|')}`);
    return 2;
  }
  checkNode();
  ensureDependencies();
  ensureSystem(purpose);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv[2]);
