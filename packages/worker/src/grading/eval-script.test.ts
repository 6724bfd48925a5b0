import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { buildEvalScript, evalScriptLines } from './eval-script.js';
import { parseLog } from './parse-log.js';

interface Instance {
  instance_id: string;
  repo: string;
  base_commit: string;
  test_patch: string;
}
const DATASET = 'swe-agent/swe-bench-lite-test.json';

function instance(id: string): Instance {
  const found = (JSON.parse(readSharedData(DATASET)) as Instance[]).find((i) => i.instance_id === id);
  if (!found) throw new Error(`fixture instance ${id} missing`);
  return found;
}

const CONDA =
  'if [ -f /opt/miniconda3/bin/activate ]; then source /opt/miniconda3/bin/activate && conda activate testbed; fi';

describe('buildEvalScript', () => {
  itWith([sharedDataNeed(DATASET)], 'builds the harness script for a django test_patch', () => {
    const { repo, base_commit, test_patch } = instance('django__django-16255');
    const testCommand = './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1';
    const script = buildEvalScript({ eval: { repo, base_commit, test_patch, test_command: testCommand } });
    const reset = `git checkout ${base_commit} tests/sitemaps_tests/test_http.py tests/sitemaps_tests/urls/http.py`;
    expect(script).toBe(
      [
        '#!/bin/bash',
        'set -uxo pipefail',
        CONDA,
        'cd /testbed',
        'git config --global --add safe.directory /testbed',
        'cd /testbed',
        'git status',
        'git show',
        `git -c core.fileMode=false diff ${base_commit}`,
        CONDA,
        reset,
        `git apply -v - <<'EOF_114329324912'\n${test_patch}\nEOF_114329324912`,
        ": '>>>>> Start Test Output'",
        `${testCommand} sitemaps_tests.test_http sitemaps_tests.urls.http`,
        // SWE-bench main's record_test_exit_code: `$?` kept, printed after the end marker.
        'RF_TEST_EXIT_CODE=$?',
        ": '>>>>> End Test Output'",
        'echo ">>>>> Test Exit Code: $RF_TEST_EXIT_CODE"',
        reset,
        '',
      ].join('\n'),
    );
  });

  itWith(
    [sharedDataNeed(DATASET)],
    'builds the harness lines for a pytest test_patch, with repo-specific commands in their slots',
    () => {
      const { repo, base_commit, test_patch } = instance('pytest-dev__pytest-11143');
      const lines = evalScriptLines({
        eval: { repo, base_commit, test_patch, test_command: 'pytest -rA' },
        evalCommands: ['export LANG=C.UTF-8'],
        installCommand: 'python -m pip install -e .',
      });
      const reset = `git checkout ${base_commit} testing/test_assertrewrite.py`;
      expect(lines.slice(0, 3)).toEqual([CONDA, 'cd /testbed', 'export LANG=C.UTF-8']);
      expect(lines.slice(-7)).toEqual([
        'python -m pip install -e .',
        reset,
        `git apply -v - <<'EOF_114329324912'\n${test_patch}\nEOF_114329324912`,
        ": '>>>>> Start Test Output'",
        'pytest -rA testing/test_assertrewrite.py',
        ": '>>>>> End Test Output'",
        reset,
      ]);
    },
  );

  it('omits reset and apply without a test_patch and resets against HEAD without a base_commit', () => {
    const lines = evalScriptLines({
      eval: { repo: 'o/r', test_command: 'pytest -rA tests' },
      condaRoot: '/opt/conda',
      condaEnv: 'py',
    });
    expect(lines[0]).toBe(
      'if [ -f /opt/conda/bin/activate ]; then source /opt/conda/bin/activate && conda activate py; fi',
    );
    expect(lines).toContain('git -c core.fileMode=false diff HEAD');
    expect(lines.some((line) => line.startsWith('git checkout') || line.startsWith('git apply'))).toBe(false);
    expect(lines.at(-2)).toBe('pytest -rA tests');
  });

  it("runs the spec's eval_commands and install step where upstream runs them (after the first activation; before the reset)", () => {
    const lines = evalScriptLines({
      eval: {
        repo: 'django/django',
        test_command: './tests/runtests.py --verbosity 2',
        test_patch:
          'diff --git a/tests/a/t.py b/tests/a/t.py\n--- a/tests/a/t.py\n+++ b/tests/a/t.py\n@@ -1 +1 @@\n-x\n+y\n',
        install: 'python setup.py install',
        eval_commands: ['export LANG=en_US.UTF-8'],
      },
    });
    expect(lines.slice(0, 3)).toEqual([CONDA, 'cd /testbed', 'export LANG=en_US.UTF-8']);
    const install = lines.indexOf('python setup.py install');
    expect(lines[install - 1]).toBe(CONDA);
    expect(lines[install + 1]).toBe('git checkout HEAD tests/a/t.py');
  });

  it('uses a given eval_script as written (its exit code recorded) and refuses a spec with neither script nor command', () => {
    const evalScript = '#!/bin/bash\necho custom\n';
    expect(buildEvalScript({ eval: { repo: 'o/r', eval_script: evalScript, test_command: 'ignored' } })).toBe(
      evalScript,
    );
    const v5 =
      "#!/bin/bash\nset -uxo pipefail\n: '>>>>> Start Test Output'\npytest -rA t.py\n: '>>>>> End Test Output'\n";
    expect(buildEvalScript({ eval: { repo: 'o/r', eval_script: v5 } })).toBe(
      "#!/bin/bash\nset -uxo pipefail\n: '>>>>> Start Test Output'\npytest -rA t.py\nRF_TEST_EXIT_CODE=$?\n: '>>>>> End Test Output'\n" +
        'echo ">>>>> Test Exit Code: $RF_TEST_EXIT_CODE"\n',
    );
    expect(() => buildEvalScript({ eval: { repo: 'o/r' } })).toThrow(
      expect.objectContaining({ code: 'INPUT_INVALID' }),
    );
  });
});

describe('buildEvalScript run by real bash in a git repository without conda', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('applies the test patch, prints the markers through set -x, runs the directives and restores the test file', () => {
    dir = mkdtempSync(join(tmpdir(), 'eval-script-'));
    // A repo_dir with a space: the script quotes it.
    const repoDir = join(dir, 'my repo');
    mkdirSync(join(repoDir, 'tests'), { recursive: true });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repoDir, encoding: 'utf8' });
    git('init', '-q');
    writeFileSync(join(repoDir, 'tests', 'check.sh'), 'echo "PASSED tests/check.sh::old"\n');
    git('add', '.');
    git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'base');
    const base = git('rev-parse', 'HEAD').trim();
    const testPatch = [
      'diff --git a/tests/check.sh b/tests/check.sh',
      '--- a/tests/check.sh',
      '+++ b/tests/check.sh',
      '@@ -1 +1,2 @@',
      ' echo "PASSED tests/check.sh::old"',
      '+echo "FAILED tests/check.sh::new - boom"',
      '',
    ].join('\n');
    const script = buildEvalScript({
      eval: { repo: 'o/r', base_commit: base, test_patch: testPatch, test_command: 'bash' },
      repoDir,
      condaRoot: join(dir, 'no-conda'),
    });
    const run = spawnSync('/bin/bash', ['-c', script], {
      encoding: 'utf8',
      // `git config --global` must not touch the real home.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    });
    const log = `${run.stdout}${run.stderr}`;
    expect(log).toContain("+ : '>>>>> Start Test Output'");
    expect(log).toContain('+ bash tests/check.sh');
    expect(parseLog(log, 'pytest')).toEqual({ 'tests/check.sh::old': 'PASSED', 'tests/check.sh::new': 'FAILED' });
    // stdout and stderr apart here: the recorded code is on stdout, after the marker's trace on stderr.
    expect(run.stdout).toMatch(/^>>>>> Test Exit Code: 0$/m);
    expect(readFileSync(join(repoDir, 'tests', 'check.sh'), 'utf8')).toBe('echo "PASSED tests/check.sh::old"\n');
  });
});
