/**
 * Tests that need something of the machine (bubblewrap and user namespaces, chromium, redis-cli):
 * `describeWith([need…], title, body)` runs the block when every need is met. When one is missing it
 * FAILS under CI (CI=true), naming what is missing and how to install it — CI must never pass by
 * skipping — and, on a developer's machine, skips the block with that reason printed once.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from 'vitest';

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

/** The absolute path of `command` on PATH, or undefined. */
export function findOnPath(command: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return undefined;
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

export function describeWith(needs: readonly Need[], title: string, body: () => void, env: NodeJS.ProcessEnv = process.env): void {
  const unmet = needs.filter((need) => need.missing !== undefined);
  if (unmet.length === 0) {
    describe(title, body);
    return;
  }
  const why = explain(unmet);
  if (isCi(env)) {
    describe(title, () => {
      it(`needs ${unmet.map((n) => n.what).join(' and ')}`, () => {
        throw new Error(`this machine cannot run "${title}": ${why}. CI must provide it (.ci/run installs it); skipping would hide the failure.`);
      });
    });
    return;
  }
  console.warn(`skipped "${title}": ${why}`);
  describe.skip(title, body);
}
