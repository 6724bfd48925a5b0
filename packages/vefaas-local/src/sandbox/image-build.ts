/**
 * "Building" an image template: SWE-bench images carry the repository checked out at base_commit in
 * /testbed. A template directory without `.git` is turned, once per host, into a git repository with one
 * commit of its files — with a fixed author and date, so the commit id is the same on every machine and
 * episodes may name it as base_commit. Templates that have `.git` are used as they are.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { IMAGE_MANIFEST } from './image-manifest.js';

const execFileAsync = promisify(execFile);
const built = new Map<string, Promise<string>>();

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'rollout-fleet',
  GIT_AUTHOR_EMAIL: 'images@rollout-fleet.invalid',
  GIT_COMMITTER_NAME: 'rollout-fleet',
  GIT_COMMITTER_EMAIL: 'images@rollout-fleet.invalid',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
};

/** The directory to copy into /testbed: the template itself, or its built git repository under `cacheRoot`. */
export function buildImage(templateDir: string, cacheRoot: string): Promise<string> {
  if (existsSync(join(templateDir, '.git'))) return Promise.resolve(templateDir);
  let pending = built.get(templateDir);
  if (!pending) {
    pending = build(templateDir, cacheRoot);
    // A failed build is retried by the next sandbox rather than cached.
    pending.catch(() => built.delete(templateDir));
    built.set(templateDir, pending);
  }
  return pending;
}

async function build(templateDir: string, cacheRoot: string): Promise<string> {
  const target = join(
    cacheRoot,
    `${basename(templateDir)}-${Buffer.from(templateDir).toString('base64url').slice(-16)}`,
  );
  if (existsSync(join(target, '.git'))) return target;
  const staging = `${target}.${process.pid}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(cacheRoot, { recursive: true });
  await cp(templateDir, staging, { recursive: true });
  // Where the repository goes is the image's business, not a file of the repository.
  await rm(join(staging, IMAGE_MANIFEST), { force: true });
  const git = (...args: string[]) =>
    execFileAsync('git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], {
      cwd: staging,
      env: { ...process.env, ...GIT_IDENTITY },
    });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'image base');
  await rename(staging, target).catch(async (err: NodeJS.ErrnoException) => {
    // Another host process built it first: use theirs.
    await rm(staging, { recursive: true, force: true });
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
  });
  return target;
}
