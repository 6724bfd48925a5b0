/**
 * Tests that need something of the machine (bubblewrap and user namespaces, chromium, redis-cli):
 * `describeWith([need…], title, body)` runs the block when every need is met. When one is missing it
 * FAILS under CI (CI=true), naming what is missing and how to install it — CI must never pass by
 * skipping — and, on a developer's machine, skips the block with that reason printed once.
 */
import { describe, it } from 'vitest';
import { findOnPath } from '@rollout-fleet/shared';

export interface Need {
  /** What is needed, for people: "bubblewrap", "chromium". */
  readonly what: string;
  /** Why it is not usable here; undefined when it is. */
  readonly missing: string | undefined;
  /** How to get it: one command. */
  readonly install: string;
}

/** True under a CI runner (GitHub Actions, GitLab and most others set CI=true). */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && value !== '0' && value !== 'false';
}

/** A program that must be on PATH, installed from the Debian package `debianPackage`. */
export function commandNeed(command: string, debianPackage: string): Need {
  return {
    what: command,
    missing: findOnPath(command) === undefined ? `${command} is not on PATH` : undefined,
    install: `sudo apt-get install -y ${debianPackage}`,
  };
}

function explain(unmet: readonly Need[]): string {
  return unmet.map((need) => `${need.what}: ${need.missing ?? ''} (install: ${need.install})`).join('; ');
}

function unmetOf(needs: readonly Need[]): Need[] {
  return needs.filter((need) => need.missing !== undefined);
}

function ciFailure(title: string, unmet: readonly Need[]): Error {
  return new Error(
    `this machine cannot run "${title}": ${explain(unmet)}. CI must provide it (.ci/run installs it); skipping would hide the failure.`,
  );
}

export function describeWith(
  needs: readonly Need[],
  title: string,
  body: () => void,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const unmet = unmetOf(needs);
  if (unmet.length === 0) {
    describe(title, body);
    return;
  }
  const why = explain(unmet);
  if (isCi(env)) {
    describe(title, () => {
      it(`needs ${unmet.map((n) => n.what).join(' and ')}`, () => {
        throw ciFailure(title, unmet);
      });
    });
    return;
  }
  console.warn(`skipped "${title}": ${why}`);
  describe.skip(title, body);
}

/** `it` with the same rule as `describeWith`, for one test of a block whose other tests need nothing. */
export function itWith(
  needs: readonly Need[],
  title: string,
  fn: () => Promise<void> | void,
  timeoutMs?: number,
  env: NodeJS.ProcessEnv = process.env,
): void {
  const unmet = unmetOf(needs);
  if (unmet.length === 0) {
    it(title, fn, timeoutMs);
    return;
  }
  if (isCi(env)) {
    it(title, () => {
      throw ciFailure(title, unmet);
    });
    return;
  }
  console.warn(`skipped "${title}": ${explain(unmet)}`);
  it.skip(title, fn);
}

/**
 * A program sandboxes can run: jailed sandboxes see only the host's /usr, so it must be there (a version
 * manager's shim elsewhere on PATH does not count).
 */
export function systemProgramNeed(program: string, debianPackage: string): Need {
  const path = `/usr/bin/${program}`;
  return {
    what: path,
    missing: findOnPath(program, '/usr/bin') === undefined ? `${path} does not exist` : undefined,
    install: `sudo apt-get install -y ${debianPackage}`,
  };
}
