/**
 * `submit` on inputs built to exhaust it — tens of megabytes in one string, an unknown key of megabytes, a
 * million levels of nesting, many samples of an oversized record — run as a user runs it (a child process), with
 * its heap capped at a few times the input: it must finish with located problems (exit 3), print a few short
 * lines, and never die of memory or the stack.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, testEnv } from './support/pipeline-harness.js';

const MB = 1024 * 1024;

describe('submit: bounded memory and output on hostile inputs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-bounded-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('finishes with short, located problems under a 256 MB heap', async () => {
    const observation = 'o'.repeat(48 * MB);
    const hugeRecord = join(dir, 'huge.jsonl');
    await writeFile(
      hugeRecord,
      `${JSON.stringify({ instance_id: 'big__one-1', sandbox: { image: 'python:3.11' }, trajectory: [{ name: 'execute_bash', arguments: { command: 'ls' }, observation }] })}\n`,
    );
    const hugeKey = join(dir, 'huge-key.json');
    await writeFile(
      hugeKey,
      JSON.stringify({ instance_id: 'k__k-1', sandbox: { image: 'python:3.11' }, ['k'.repeat(8 * MB)]: 1 }),
    );
    const deep = join(dir, 'deep.json');
    await writeFile(deep, '['.repeat(MB) + ']'.repeat(MB));

    const run = await runCli(
      ['submit', hugeRecord, hugeKey, deep, '--run', 'bounded', '--samples', '40', '--dry-run'],
      {
        ...testEnv(),
        NODE_OPTIONS: '--max-old-space-size=256',
      },
    );
    expect(run.code, run.stderr.slice(0, 2_000)).toBe(3);
    const lines = run.stderr.trim().split('\n');
    // Format detection reports first, then each importer; samples of one record share one size problem.
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^${deep}:1: too deeply nested \\(nested deeper than 128 levels\\) — `)),
      expect.stringMatching(new RegExp(`^${hugeKey}: Unrecognized key: "k{300,}… \\(\\d+ more characters\\) — `)),
      expect.stringMatching(
        new RegExp(`^${hugeRecord}:1: episode is \\d+ bytes serialized, over the limit of 1048576 — `),
      ),
      'submit: 3 problem(s) in 3 file(s); nothing was enqueued',
    ]);
    expect(run.stderr.length).toBeLessThan(4_000);
    // Writes and reads ~100 MB of hostile input in a child process held to a 256 MB heap: 37 s alone on this
    // 2-core machine, so the suite's 60 s default leaves no room for a loaded run.
  }, 120_000);
});
