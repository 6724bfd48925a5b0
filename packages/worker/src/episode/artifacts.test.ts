import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathSegment, writeArtifacts } from './artifacts.js';

describe('writeArtifacts (RF_ARTIFACTS_DIR)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rf-artifacts-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('writes the whole texts under <run>/<episode>/<sample>/attempt-<n>-<id>/ and lists them', async () => {
    const written = await writeArtifacts({
      root,
      runId: 'run-1',
      episodeId: 'django__django-11099',
      sampleIndex: 2,
      attempt: 3,
      evalLog: 'log '.repeat(100_000),
      patch: 'diff --git a/x b/x\n',
      evalScript: '#!/bin/bash\n',
      steps: ['first', undefined, 'third'],
    });
    expect(written.root).toBe(root);
    expect(written.path).toMatch(/^run-1\/django__django-11099\/2\/attempt-3-[0-9a-f]{6}$/);
    expect(written.files).toEqual(['eval.log', 'patch.diff', 'eval.sh', 'steps/0.txt', 'steps/2.txt']);
    const dir = join(root, written.path);
    expect(await readFile(join(dir, 'eval.log'), 'utf8')).toBe('log '.repeat(100_000));
    expect((await readdir(join(dir, 'steps'))).sort()).toEqual(['0.txt', '2.txt']);
  });

  it('keeps ids inside their directory: `/`, `.` and `..` become one segment each', async () => {
    expect(pathSegment('a/b')).toBe('a%2Fb');
    expect(pathSegment('..')).toBe('%2E%2E');
    expect(pathSegment('.')).toBe('%2E');
    expect(pathSegment('50%')).toBe('50%25');
    const written = await writeArtifacts({
      root,
      runId: '..',
      episodeId: '../../x',
      sampleIndex: 0,
      attempt: 1,
      steps: [],
    });
    expect(written.path.startsWith('%2E%2E/..%2F..%2Fx/0/attempt-1-')).toBe(true);
    expect(await readdir(join(root, '%2E%2E'))).toEqual(['..%2F..%2Fx']);
  });
});
