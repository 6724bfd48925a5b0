/**
 * The eval script (§5 step 3; SWE-bench v4.1.0 `test_spec/python.py`, `make_eval_script_list_py`), adapted
 * to sandboxes that may not ship conda:
 * - the two conda activations run only when `<conda>/bin/activate` exists, so plain images (python on PATH)
 *   run the same script;
 * - without a test_patch there is nothing to reset or apply, and without modified test files the reset is
 *   omitted (a bare `git checkout <commit>` would move HEAD);
 * - a missing base_commit resets against HEAD.
 * The markers reach the log through `set -x` as `+ : '>>>>> Start Test Output'`.
 */
import { RolloutError, type EvalSpec } from '@rollout-fleet/shared';
import { shellQuote } from '@rollout-fleet/sandbox';
import { END_TEST_OUTPUT, START_TEST_OUTPUT } from './log-markers.js';
import { recordTestExitCode } from './run-evidence.js';
import { modifiedFiles, testDirectives } from './test-directives.js';

/** The harness's heredoc delimiter; test patches never contain it. */
export const HEREDOC_DELIMITER = 'EOF_114329324912';

export interface EvalScriptOptions {
  eval: Pick<
    EvalSpec,
    'repo' | 'base_commit' | 'test_patch' | 'test_command' | 'eval_script' | 'install' | 'eval_commands'
  >;
  /** Repository checkout inside the sandbox. @defaultValue '/testbed' */
  repoDir?: string;
  /** Conda installation whose `bin/activate` is sourced when present. @defaultValue '/opt/miniconda3' */
  condaRoot?: string;
  /** Conda environment to activate. @defaultValue 'testbed' */
  condaEnv?: string;
  /** Repository-specific commands run right after the first activation (SWE-bench `eval_commands`). @defaultValue eval.eval_commands */
  evalCommands?: readonly string[];
  /** Repository-specific install command run before the tests (SWE-bench `install`). @defaultValue eval.install */
  installCommand?: string;
}

function condaActivation(condaRoot: string, condaEnv: string): string {
  const activate = `${condaRoot}/bin/activate`;
  return `if [ -f ${activate} ]; then source ${activate} && conda activate ${condaEnv}; fi`;
}

/** The lines between the script header and its end, in the harness's order. */
export function evalScriptLines(options: EvalScriptOptions): string[] {
  const spec = options.eval;
  if (spec.test_command === undefined) {
    throw new RolloutError('INPUT_INVALID', 'eval.test_command is required when eval.eval_script is not given', {
      details: { repo: spec.repo },
    });
  }
  // Quoted: repo_dir is any absolute path (spaces included); `/testbed` stays the harness's literal text.
  const repoDir = shellQuote(options.repoDir ?? '/testbed');
  const activation = condaActivation(options.condaRoot ?? '/opt/miniconda3', options.condaEnv ?? 'testbed');
  const baseCommit = spec.base_commit ?? 'HEAD';
  const testPatch = spec.test_patch ?? '';
  const testFiles = testPatch === '' ? [] : modifiedFiles(testPatch);
  const reset = testFiles.length > 0 ? [`git checkout ${baseCommit} ${testFiles.join(' ')}`] : [];
  const applyTestPatch =
    testPatch === '' ? [] : [`git apply -v - <<'${HEREDOC_DELIMITER}'\n${testPatch}\n${HEREDOC_DELIMITER}`];
  const directives = testPatch === '' ? [] : testDirectives(testPatch, spec.repo);
  const install = options.installCommand ?? spec.install;

  return [
    activation,
    `cd ${repoDir}`,
    ...(options.evalCommands ?? spec.eval_commands ?? []),
    `git config --global --add safe.directory ${repoDir}`,
    `cd ${repoDir}`,
    'git status',
    'git show',
    `git -c core.fileMode=false diff ${baseCommit}`,
    activation,
    ...(install === undefined ? [] : [install]),
    ...reset,
    ...applyTestPatch,
    `: '${START_TEST_OUTPUT}'`,
    [spec.test_command, ...directives].join(' '),
    `: '${END_TEST_OUTPUT}'`,
    ...reset,
  ];
}

/**
 * The whole `/eval.sh`; a given `eval.eval_script` (SWE-bench v5 datasets) is used as it is written, both with
 * the test command's exit code recorded after the end marker (run-evidence.ts), as upstream main's
 * `make_test_spec` does.
 */
export function buildEvalScript(options: EvalScriptOptions): string {
  if (options.eval.eval_script !== undefined)
    return recordTestExitCode(options.eval.eval_script.split('\n')).join('\n');
  return `#!/bin/bash\nset -uxo pipefail\n${recordTestExitCode(evalScriptLines(options)).join('\n')}\n`;
}
