/**
 * Nonce markers (docs/adversarial-grading.md, "The result channel"): the script is rewritten so the markers carry
 * the nonce, and the reader takes only what lies between the two that do. Each row is a way the test output tries
 * to pass for something else: a fake end marker, result lines after the end, markers never printed.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { END_TEST_OUTPUT, START_TEST_OUTPUT } from '../grading/log-markers.js';
import { instrumentEvalScript, newNonce, nonceMarkers, readMarkedRegion, regionLog } from './eval-nonce.js';

const NONCE = '0123456789abcdef0123456789abcdef';
const { start, end } = nonceMarkers(NONCE);
const ok = (name: string): string => `${name} ... ok`;

describe('readMarkedRegion', () => {
  it('takes only the lines between the nonce markers', () => {
    const log = [
      `+ git status`,
      ok('test_b (m.T.test_b)'),
      `+ : '${start}'`,
      ok('test_a (m.T.test_a)'),
      `+ : '${end}'`,
      '',
    ].join('\n');
    const region = readMarkedRegion(log, NONCE, 'django');
    expect(region.findings).toEqual([]);
    expect(region.between).toBe(ok('test_a (m.T.test_a)'));
  });

  it.each([
    [
      'a fake end marker and no real one (the test hung past it)',
      [`+ : '${start}'`, `+ : '${END_TEST_OUTPUT}'`, ok('t (m.T.t)')],
      'EVAL_MARKERS_MISSING',
    ],
    [
      'no start marker with the nonce (plain markers only)',
      [`+ : '${START_TEST_OUTPUT}'`, ok('t (m.T.t)'), `+ : '${END_TEST_OUTPUT}'`],
      'EVAL_MARKERS_MISSING',
    ],
    [
      'a fake end marker inside, then the real one',
      [`+ : '${start}'`, `+ : '${END_TEST_OUTPUT}'`, `+ : '${end}'`],
      'EVAL_MARKER_FORGED',
    ],
    [
      'result lines after the end marker (at exit, from a process left running)',
      [`+ : '${start}'`, `+ : '${end}'`, ok('t (m.T.t)')],
      'RESULT_LINES_OUTSIDE_MARKERS',
    ],
  ])('%s → %s (violated)', (_name, lines, code) => {
    const region = readMarkedRegion(lines.join('\n'), NONCE, 'django');
    expect(region.findings.map((f) => f.code)).toEqual([code]);
    expect(region.findings[0]?.severity).toBe('violated');
  });

  it('a region log holds the region only, with the harness markers', () => {
    expect(regionLog('x')).toBe(`${START_TEST_OUTPUT}\nx\n${END_TEST_OUTPUT}\n`);
    expect(regionLog(null)).toBe('');
  });

  it('nonces are fresh 128-bit hex', () => {
    expect(newNonce()).toMatch(/^[0-9a-f]{32}$/);
    expect(newNonce()).not.toBe(newNonce());
  });
});

describe('instrumentEvalScript', () => {
  const SCRIPT = [
    '#!/bin/bash',
    'set -uxo pipefail',
    'git status',
    `: '${START_TEST_OUTPUT}'`,
    "python3 -c \"import os; print(os.environ.get('RF_CHANNEL_MODE'), os.environ.get('RF_EVAL_NONCE'))\"",
    `: '${END_TEST_OUTPUT}'`,
    '',
  ].join('\n');

  it('run by bash: the markers carry the nonce, the nonce file is gone, the test command sees the channel but not the nonce', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-nonce-'));
    try {
      const nonceFile = join(dir, 'nonce');
      await writeFile(nonceFile, `${NONCE}\n`);
      const script = instrumentEvalScript(SCRIPT, {
        nonceFile,
        channelDir: '/tmp/ch',
        graderDir: '/tmp/gr',
        mode: 'unittest',
      });
      expect(script).not.toContain(NONCE);
      await writeFile(join(dir, 'eval.sh'), script);
      const { stdout, stderr } = await promisify(execFile)('/bin/bash', [join(dir, 'eval.sh')], { cwd: dir });
      const log = stdout + stderr;
      const region = readMarkedRegion(stderr, NONCE, 'django');
      expect(region.between, log).not.toBeNull();
      expect(stdout).toBe('unittest None\n');
      await expect(promisify(execFile)('/bin/ls', [nonceFile])).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a script without the harness markers gets none (its log then has no nonce marker)', () => {
    const script = instrumentEvalScript('#!/bin/bash\npytest\n', {
      nonceFile: '/n',
      channelDir: '/c',
      graderDir: '/g',
      mode: 'pytest',
    });
    expect(script).not.toContain('Start Test Output');
  });
});
