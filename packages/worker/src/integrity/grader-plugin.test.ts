/**
 * The grader's Python reporter run for real (/usr/bin/python3, as the sandboxes run it) under pytest and under
 * unittest, then read by the worker's reader: the statuses the runner reports, setup errors and xfail/skip as
 * upstream names them; and the attacks the reporter itself must see — os._exit before the session ends, a test
 * that rebinds the plugin, a test that writes the channel file directly, a second process of the run.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { GRADER_DIR_URL } from './grader-dir.js';
import { readChannel } from './result-channel.js';

const run = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const KEY = 'a1'.repeat(16);
const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** Runs `args` in a fresh repository holding `files`, with the channel as the eval script sets it up. */
async function runWithChannel(
  mode: 'pytest' | 'unittest',
  files: Record<string, string>,
  args: string[],
): Promise<{ text: string; stdout: string; keyLeft: boolean }> {
  const root = await mkdtemp(join(tmpdir(), 'rf-channel-'));
  dirs.push(root);
  const repo = join(root, 'repo');
  const channel = join(root, 'channel');
  await mkdir(join(repo, 'tests'), { recursive: true });
  await mkdir(channel);
  for (const [name, body] of Object.entries(files)) await writeFile(join(repo, name), body);
  await writeFile(join(channel, 'key'), KEY);
  const env = {
    PATH: '/usr/bin:/bin',
    RF_CHANNEL: channel,
    RF_CHANNEL_MODE: mode,
    PYTHONPATH: fileURLToPath(GRADER_DIR_URL),
    PYTEST_ADDOPTS: '-p rf_result_channel',
  };
  const out = await run(PYTHON, args, { cwd: repo, env }).catch((err: { stdout?: string }) => ({
    stdout: err.stdout ?? '',
  }));
  const text = await readFile(join(channel, 'results.jsonl'), 'utf8').catch(() => '');
  const keyLeft = await readFile(join(channel, 'key')).then(
    () => true,
    () => false,
  );
  return { text, stdout: out.stdout, keyLeft };
}

const PYTEST_TESTS = [
  'import pytest',
  'def test_pass(): assert True',
  'def test_fail(): assert False',
  '@pytest.fixture',
  'def broken(): raise RuntimeError("setup")',
  'def test_setup_error(broken): pass',
  '@pytest.mark.skip(reason="no")',
  'def test_skip(): pass',
  '@pytest.mark.xfail',
  'def test_xfail(): assert False',
  '',
].join('\n');

describe('the pytest plugin', () => {
  it('reports every test with upstream statuses, then ends; the key file is gone', async () => {
    const { text, keyLeft } = await runWithChannel('pytest', { 'tests/test_a.py': PYTEST_TESTS }, [
      '-m',
      'pytest',
      '-rA',
      'tests',
    ]);
    const reading = readChannel(text, KEY);
    expect(reading.findings).toEqual([]);
    expect(reading.statuses).toEqual({
      'tests/test_a.py::test_pass': 'PASSED',
      'tests/test_a.py::test_fail': 'FAILED',
      'tests/test_a.py::test_setup_error': 'ERROR',
      'tests/test_a.py::test_skip': 'SKIPPED',
      'tests/test_a.py::test_xfail': 'XFAIL',
    });
    expect(keyLeft).toBe(false);
  });

  it('os._exit(0) in a test: the session never ends, the channel says so', async () => {
    const tests =
      'import os\ndef test_a(): assert True\ndef test_b():\n    print("PASSED tests/test_a.py::test_c")\n    os._exit(0)\n';
    const reading = readChannel(
      (await runWithChannel('pytest', { 'tests/test_a.py': tests }, ['-m', 'pytest', '-rA', 'tests'])).text,
      KEY,
    );
    expect(reading.findings.map((f) => f.code)).toEqual(['RESULT_CHANNEL_INCOMPLETE']);
  });

  it('a test that imports the plugin and rebinds it is seen as tampering', async () => {
    const tests = [
      'import rf_result_channel as ch',
      'real = ch._emit',
      "ch._emit = lambda r, *a, **k: real(dict(r, s='PASSED')) if r.get('k') == 'test' else real(r, *a, **k)",
      'def test_a(): assert False',
      '',
    ].join('\n');
    const reading = readChannel(
      (await runWithChannel('pytest', { 'tests/test_a.py': tests }, ['-m', 'pytest', '-rA', 'tests'])).text,
      KEY,
    );
    expect(reading.findings.map((f) => f.code)).toContain('RESULT_CHANNEL_TAMPERED');
  });

  it('a test that appends to the channel file directly is seen as forged', async () => {
    const tests = [
      'import glob, os',
      'def test_a():',
      "    for path in glob.glob(os.path.join(os.environ.get('RF_CHANNEL', '/nonexistent'), '*.jsonl')):",
      '        open(path, \'a\').write(\'{"k":"test","id":"tests/test_a.py::test_a","s":"PASSED","n":3}\\tdeadbeef\\n\')',
      '    assert False',
      '',
    ].join('\n');
    const reading = readChannel(
      (await runWithChannel('pytest', { 'tests/test_a.py': tests }, ['-m', 'pytest', '-rA', 'tests'])).text,
      KEY,
    );
    expect(reading.findings.map((f) => f.code)).toEqual(['RESULT_CHANNEL_FORGED']);
  });
});

describe('the unittest hook (sitecustomize)', () => {
  const TESTS = [
    'import unittest',
    'class T(unittest.TestCase):',
    '    def test_pass(self): pass',
    '    def test_fail(self): self.assertEqual(1, 2)',
    '    def test_error(self): raise RuntimeError()',
    '    @unittest.skip("no")',
    '    def test_skip(self): pass',
    '    @unittest.expectedFailure',
    '    def test_xfail(self): self.fail()',
    '',
  ].join('\n');

  it('reports each test by the name unittest -v prints (what the django parser reads), then ends', async () => {
    const { text, stdout, keyLeft } = await runWithChannel(
      'unittest',
      { 'tests/__init__.py': '', 'tests/test_u.py': TESTS },
      ['-m', 'unittest', '-v'],
    );
    const reading = readChannel(text, KEY);
    expect(reading.findings, stdout).toEqual([]);
    expect(reading.statuses).toEqual({
      'test_pass (tests.test_u.T.test_pass)': 'PASSED',
      'test_fail (tests.test_u.T.test_fail)': 'FAILED',
      'test_error (tests.test_u.T.test_error)': 'ERROR',
      'test_skip (tests.test_u.T.test_skip)': 'SKIPPED',
      'test_xfail (tests.test_u.T.test_xfail)': 'XFAIL',
    });
    expect(keyLeft).toBe(false);
  });

  it('forged lines at import and atexit, then os._exit(0): incomplete, and the failing test is still FAILED', async () => {
    const rigged = [
      'import atexit, os, sys',
      "print('test_fail (tests.test_u.T.test_fail) ... ok')",
      "atexit.register(lambda: (sys.stdout.write('test_fail (tests.test_u.T.test_fail) ... ok\\n'), sys.stdout.flush(), os._exit(0)))",
      '',
    ].join('\n');
    const { text } = await runWithChannel('unittest', { 'tests/__init__.py': rigged, 'tests/test_u.py': TESTS }, [
      '-m',
      'unittest',
      '-v',
    ]);
    const reading = readChannel(text, KEY);
    expect(reading.statuses['test_fail (tests.test_u.T.test_fail)']).toBe('FAILED');
    // atexit runs last-registered first: the patch's os._exit can pre-empt the hook's own end record.
    expect(reading.findings.map((f) => f.code)).toEqual(['RESULT_CHANNEL_INCOMPLETE']);
  });

  it('a test that rebinds TestResult.addFailure to addSuccess is seen as tampering', async () => {
    const rigged =
      'import unittest.result as r\nr.TestResult.addFailure = lambda self, test, err: r.TestResult.addSuccess(self, test)\n';
    const { text } = await runWithChannel('unittest', { 'tests/__init__.py': rigged, 'tests/test_u.py': TESTS }, [
      '-m',
      'unittest',
      '-v',
    ]);
    expect(readChannel(text, KEY).findings.map((f) => f.code)).toContain('RESULT_CHANNEL_TAMPERED');
  });
});
