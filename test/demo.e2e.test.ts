/**
 * `npm run demo`, the README's main command, as a person runs it: a child process that embeds vefaas-local,
 * runs two worker processes, and exits 0 only when every outcome matches examples/expected.json. On a machine
 * where bubblewrap cannot run, the demo still runs its own examples, without isolation, saying so in one line.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { createRedis, keysMatching } from '@rollout-fleet/shared';
import { childEnv, runNode, type CliRun } from './support/pipeline-harness.js';

function runDemo(env: Record<string, string>, args: string[] = []): Promise<CliRun> {
  return runNode(['--import', 'tsx', 'cli/demo.ts', ...args], {
    env: childEnv({ ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}), ...env }),
  });
}

function expectEveryOutcome(stdout: string): void {
  expect(stdout).toMatch(/summary\s+6 episodes: 3 resolved, 3 unresolved, 0 failed; 0 unexpected/);
  expect(stdout).toContain('demo: every outcome matches examples/expected.json');
  for (const id of ['pyutils__calc-add', 'pyutils__fizz-order', 'pyutils__stats-mean']) {
    expect(stdout).toMatch(new RegExp(`${id}\\s+true\\s+true`));
  }
}

describeWith([bwrapNeed()], 'npm run demo', () => {
  it('runs the examples sweep in bubblewrap sandboxes and reports every expected outcome', async () => {
    const { code, stdout, stderr } = await runDemo({});
    expect({ code, stderr: stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(stdout).toMatch(/sandboxes: bwrap/);
    expect(stdout).not.toContain('isolation  OFF');
    expectEveryOutcome(stdout);
  }, 120_000);
});

describe('npm run demo arguments', () => {
  it('takes no input of the user: a file or any unknown argument is refused (exit 2) before anything starts', async () => {
    for (const args of [['my-episodes.jsonl'], ['--policy', 'policy.json'], ['--input=episodes.jsonl']]) {
      const { code, stdout, stderr } = await runDemo({}, args);
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(stderr).toMatch(
        /^demo: takes no input \(got .+\); it runs only the bundled examples\. Submit your own episodes with `rollout-fleet submit <file>`/,
      );
    }
  }, 60_000);

  it('--help says what it runs and its exit codes, and starts nothing', async () => {
    const { code, stdout } = await runDemo({}, ['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: npm run demo \[-- --policy\]/);
    expect(stdout).toContain('It takes no input of yours');
    expect(stdout).not.toMatch(/^redis /m);
  }, 60_000);
});

describe('npm run demo where bubblewrap cannot run', () => {
  let shimDir: string;
  beforeAll(async () => {
    // A `bwrap` first on PATH that fails as bubblewrap does where user namespaces are refused.
    shimDir = await mkdtemp(join(tmpdir(), 'rf-no-bwrap-'));
    await writeFile(
      join(shimDir, 'bwrap'),
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
    );
    await chmod(join(shimDir, 'bwrap'), 0o755);
  });
  afterAll(async () => {
    if (shimDir) await rm(shimDir, { recursive: true, force: true });
  });

  it('runs its own examples without isolation, says so in one line, and leaves no keys behind', async () => {
    const { code, stdout, stderr } = await runDemo({ PATH: `${shimDir}${delimiter}${process.env.PATH ?? ''}` });
    expect({ code, stderr: stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    const lines = stdout.split('\n').filter((line) => /isolation/i.test(line) && /off/i.test(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^isolation {2}OFF: bubblewrap cannot run here \(a trial jail failed: bwrap: No permissions to create new namespace\); running only the bundled examples without isolation — install bubblewrap/,
    );
    expect(stdout).toMatch(/sandboxes: none/);
    expect(stderr).not.toMatch(/ISOLATION IS OFF/);
    expectEveryOutcome(stdout);
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      expect(await keysMatching(redis, '*rf-demo-*')).toEqual([]);
    } finally {
      redis.disconnect();
    }
  }, 120_000);
});
