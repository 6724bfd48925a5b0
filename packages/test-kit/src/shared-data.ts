/**
 * Files of the project's shared data (files of public repositories, read where they are and never copied into this
 * one; its README lists them): `<repository>/../shared/data`, where CI has it, or $ROLLOUT_FLEET_SHARED_DATA (a
 * checkout elsewhere, e.g. a git worktree). A test that reads one declares `sharedDataNeed(...)` with
 * describeWith/itWith: skipped with the reason where the data is absent, failed under CI.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Need } from './needs.js';

export function sharedDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.ROLLOUT_FLEET_SHARED_DATA ?? '';
  return override !== '' ? resolve(override) : fileURLToPath(new URL('../../../../shared/data', import.meta.url));
}

/** Absolute path of `relative` (e.g. `swe-agent/swe-bench-lite-test.json`) in the shared data. */
export function sharedDataPath(relative: string): string {
  return resolve(sharedDataDir(), relative);
}

/** The shared data files `relatives`, as a need. */
export function sharedDataNeed(...relatives: string[]): Need {
  const absent = relatives.map(sharedDataPath).filter((path) => !existsSync(path));
  return {
    what: `shared data (${relatives.join(', ')})`,
    missing: absent.length === 0 ? undefined : `${absent.join(', ')} not found`,
    install:
      "put the project's shared data beside the checkout (../shared/data, as CI has it) or set ROLLOUT_FLEET_SHARED_DATA to its directory",
  };
}

/** The text of a shared data file; read it inside a test (or hook) guarded by `sharedDataNeed`. */
export function readSharedData(relative: string): string {
  return readFileSync(sharedDataPath(relative), 'utf8');
}
