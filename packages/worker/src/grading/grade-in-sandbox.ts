/**
 * Grading inside a sandbox, SWE-bench style: take the patch (the sandbox's own diff, or a given model
 * patch applied with the harness's three apply commands), run the eval script with its timeout, parse
 * the log and apply the resolved rule.
 */
import type { EvalSpec, GradingReport, ResolutionStatus } from '@rollout-fleet/shared';
import { buildApplyPatchScript } from './apply-patch-script.js';
import { buildEvalScript } from './eval-script.js';
import { gradeInstance } from './grade-instance.js';
import { timeoutNotice } from './log-markers.js';

export interface GradingShell {
  run(command: string, options: { timeoutS: number }): Promise<{ output: string; exitCode: number | null; timedOut: boolean }>;
  writeFile(path: string, content: string): Promise<void>;
}

export interface SandboxGrade {
  report: GradingReport;
  resolution: ResolutionStatus;
  /** The graded patch; null = no prediction. */
  patch: string | null;
  log: string;
  testsTimedOut: boolean;
}

const REPO = '/testbed';
const PATCH_FILE = '/tmp/rollout-fleet/patch.diff';
const APPLY_FILE = '/tmp/rollout-fleet/apply_patch.sh';
const EVAL_FILE = '/tmp/rollout-fleet/eval.sh';
const SETUP_TIMEOUT_S = 120;

/** The working tree's changes against HEAD, new files included (as SWE-agent's submit collects them). */
export async function diffWorkingTree(shell: GradingShell): Promise<string> {
  const ran = await shell.run(`cd ${REPO} && git add -A && git --no-pager diff --cached --no-color HEAD`, { timeoutS: SETUP_TIMEOUT_S });
  if (ran.timedOut || ran.exitCode !== 0) throw new Error(`git diff failed in ${REPO}: ${ran.output.slice(0, 300)}`);
  return ran.output;
}

export async function gradeInSandbox(options: {
  shell: GradingShell;
  instanceId: string;
  eval: EvalSpec;
  /**
   * `in-place`: the changes are already in the working tree (the replayed sandbox); `apply`: `patch` is
   * applied to a clean checkout first (grading-only sweeps, --fresh-eval).
   */
  mode: 'in-place' | 'apply';
  patch: string | null;
}): Promise<SandboxGrade> {
  const { shell, instanceId, mode, patch } = options;
  const notGraded = (report: Partial<GradingReport>): SandboxGrade => ({
    report: { patch_is_None: false, patch_exists: false, patch_successfully_applied: false, resolved: false, ...report },
    resolution: 'RESOLVED_NO',
    patch,
    log: '',
    testsTimedOut: false,
  });
  // SWE-bench does not run empty predictions; they count as empty patches, never as resolved.
  if (patch === null) return notGraded({ patch_is_None: true });
  if (patch.trim() === '') return notGraded({});

  let log = '';
  let patchApplied = true;
  if (mode === 'apply') {
    await shell.writeFile(PATCH_FILE, patch.endsWith('\n') ? patch : `${patch}\n`);
    await shell.writeFile(APPLY_FILE, buildApplyPatchScript(PATCH_FILE, { repoDir: REPO }));
    const applied = await shell.run(`/bin/bash ${APPLY_FILE}`, { timeoutS: SETUP_TIMEOUT_S });
    log += applied.output;
    patchApplied = !applied.timedOut && applied.exitCode === 0;
  }
  if (!patchApplied) {
    const grade = gradeInstance({ instanceId, log, eval: options.eval, patch, patchApplied: false });
    return { ...grade, patch, log, testsTimedOut: false };
  }

  await shell.writeFile(EVAL_FILE, buildEvalScript({ eval: options.eval, repoDir: REPO }));
  const tests = await shell.run(`/bin/bash ${EVAL_FILE} 2>&1`, { timeoutS: options.eval.timeout_s });
  log += tests.output;
  if (tests.timedOut) log += timeoutNotice(options.eval.timeout_s);
  const grade = gradeInstance({ instanceId, log, eval: options.eval, patch, patchApplied: true });
  return { ...grade, patch, log, testsTimedOut: tests.timedOut };
}
