/**
 * Grading inside a sandbox, SWE-bench style: apply the patch to a clean checkout with the harness's three
 * apply commands (or take the tree as it is, `in-place`), run the eval script with its timeout, parse the
 * log and apply the resolved rule.
 *
 * Wire contract: SWE-ReX `POST /write_file` for the patch and the scripts, `POST /execute` (argv list, no bash
 * session, `bash --noprofile --norc`, the sandbox's own environment) for the apply step and the eval — so no
 * shell state (functions, aliases, exported variables, background jobs writing to a terminal) reaches them.
 */
import {
  DEFAULT_REPO_DIR,
  RolloutError,
  type EvalSpec,
  type GradingDetails,
  type GradingReport,
  type ResolutionStatus,
} from '@rollout-fleet/shared';
import { SwerexRuntimeError, type CommandResponse } from '@rollout-fleet/sandbox';
import { buildApplyPatchScript } from './apply-patch-script.js';
import { buildEvalScript } from './eval-script.js';
import { gradeInstance } from './grade-instance.js';
import type { GradingShell } from './grading-shell.js';
import { gradingDetails, untestedDetails } from './grading-details.js';
import { timeoutNotice } from './log-markers.js';
import { restoreTestSide } from './restore-test-side.js';
import { TEST_EXIT_CODE, testExitCode } from './run-evidence.js';
import { openEvalChannel } from '../integrity/eval-channel.js';

export type { GradingShell } from './grading-shell.js';

export interface SandboxGrade {
  report: GradingReport;
  resolution: ResolutionStatus;
  /** The graded patch; null = no prediction. */
  patch: string | null;
  log: string;
  testsTimedOut: boolean;
  /** The result's `grading` block: parser, tests parsed, per-test status, the log (bounded). */
  details: GradingDetails;
}

/** The episode contract's default (SWE-bench images keep the repository at /testbed); callers pass `repo_dir`. */
export { DEFAULT_REPO_DIR };

/** How much of the eval log a result keeps when the caller does not say (RF_STEP_OUTPUT_LIMIT_BYTES's default). */
export const DEFAULT_EVAL_LOG_LIMIT_BYTES = 1024 * 1024;
const WORK_DIR = '/tmp/rollout-fleet';
const PATCH_FILE = `${WORK_DIR}/patch.diff`;
const APPLY_FILE = `${WORK_DIR}/apply_patch.sh`;
const EVAL_FILE = `${WORK_DIR}/eval.sh`;
const UNTRACKED_FILE = `${WORK_DIR}/untracked.before`;
const SETUP_TIMEOUT_S = 120;
/** /execute's own timeout beyond the eval's: the in-sandbox `timeout` normally fires first and keeps the log. */
const EVAL_MARGIN_S = 60;

/**
 * Runs the eval under coreutils `timeout` when the image has it, so a timed-out eval still returns the output
 * it produced (SWE-bench keeps it in test_output.txt); `-k` kills what ignores SIGTERM.
 */
const EVAL_RUNNER = `if [ -x /usr/bin/timeout ]; then exec /usr/bin/timeout -k 10 "$2" /bin/bash --noprofile --norc "$1"; fi
exec /bin/bash --noprofile --norc "$1"`;

/** Which part of grading a sandbox failure happened in: only `eval` runs code of the patch. */
export type GradingPhase = 'setup' | 'apply' | 'eval';

export async function gradeInSandbox(options: {
  shell: GradingShell;
  instanceId: string;
  eval: EvalSpec;
  /**
   * `apply`: `patch` is applied to the sandbox's clean checkout first (fresh-sandbox grading, grading-only
   * sweeps); `in-place`: the changes are already in the working tree (the agent's sandbox; unsafe against
   * adversarial policies, see docs/adversarial-grading.md).
   */
  mode: 'in-place' | 'apply';
  patch: string | null;
  /** @defaultValue '/testbed' */
  repoDir?: string;
  /** The eval log kept in `details`, bytes (head + marker + tail beyond). @defaultValue 1 MiB */
  logLimitBytes?: number;
}): Promise<SandboxGrade> {
  const { shell, instanceId, mode, patch } = options;
  const repoDir = options.repoDir ?? DEFAULT_REPO_DIR;
  const logLimitBytes = options.logLimitBytes ?? DEFAULT_EVAL_LOG_LIMIT_BYTES;
  // SWE-bench does not run empty predictions; they count as empty patches, never as resolved.
  if (patch === null || patch.trim() === '') return emptyPatchGrade(options.eval, patch);

  let log = '';
  let patchApplied = true;
  if (mode === 'apply') {
    await phase('setup', () => shell.writeFile(PATCH_FILE, patch.endsWith('\n') ? patch : `${patch}\n`));
    await phase('setup', () =>
      shell.writeFile(APPLY_FILE, buildApplyPatchScript(PATCH_FILE, { repoDir, untrackedSnapshot: UNTRACKED_FILE })),
    );
    const applied = await phase('apply', () =>
      shell.execute({
        command: ['/bin/bash', '--noprofile', '--norc', APPLY_FILE],
        merge_output_streams: true,
        timeout: SETUP_TIMEOUT_S,
      }),
    );
    log += applied.stdout;
    patchApplied = applied.exit_code === 0;
  }
  if (!patchApplied) {
    const grade = gradeInstance({ instanceId, log, eval: options.eval, patch, patchApplied: false });
    const details = gradingDetails({
      eval: options.eval,
      view: grade.view,
      log,
      logLimitBytes,
      timedOut: false,
      notRun: 'the patch did not apply (see the log)',
    });
    // The whole log is the apply step's: no eval ran (results --format swebench writes no test_output.txt).
    return { ...grade, patch, log, testsTimedOut: false, details: { ...details, eval_output_offset: byteLength(log) } };
  }

  // The test side back to base_commit (+ test_patch, applied by the eval script): docs/adversarial-grading.md, 9.
  const restore = await phase('apply', () =>
    restoreTestSide(shell, {
      repoDir,
      eval: options.eval,
      ...(mode === 'apply' ? { untrackedSnapshot: UNTRACKED_FILE } : {}),
    }),
  );
  if (!restore.ok) {
    const grade = gradeInstance({ instanceId, log, eval: options.eval, patch, patchApplied: false });
    const details = gradingDetails({
      eval: options.eval,
      view: grade.view,
      log: `${log}\n${restore.message}\n`,
      logLimitBytes,
      timedOut: false,
      notRun: `the test-side paths could not be put back to the base commit (${restore.message})`,
      integrity: { restored: [], findings: restore.findings },
    });
    return { ...grade, patch, log, testsTimedOut: false, details };
  }

  const timeoutS = options.eval.timeout_s;
  // The nonce markers and the result channel (docs/adversarial-grading.md, "The result channel").
  const channel = await phase('setup', () => openEvalChannel(shell, options.eval, WORK_DIR));
  const evalScript = channel.instrument(buildEvalScript({ eval: options.eval, repoDir }));
  // The eval's own output (SWE-bench's test_output.txt) starts here; before it is the apply step's.
  const evalOutputOffset = byteLength(log);
  await phase('setup', () => shell.writeFile(EVAL_FILE, evalScript));
  const started = performance.now();
  let tests: CommandResponse;
  let timedOut: boolean;
  try {
    tests = await phase('eval', () =>
      shell.execute({
        command: ['/bin/bash', '--noprofile', '--norc', '-c', EVAL_RUNNER, 'rf-eval', EVAL_FILE, String(timeoutS)],
        merge_output_streams: true,
        timeout: timeoutS + EVAL_MARGIN_S,
      }),
    );
    const elapsedS = (performance.now() - started) / 1000;
    timedOut = (tests.exit_code === 124 || tests.exit_code === 137) && elapsedS >= timeoutS;
  } catch (thrown) {
    // No coreutils `timeout` in the image and the tests hung: the output is lost, the verdict is not.
    if (!(thrown instanceof RolloutError) || thrown.code !== 'GRADING_FAILED' || !isCommandTimeout(thrown.cause))
      throw thrown;
    tests = { stdout: '', stderr: '', exit_code: null };
    timedOut = true;
  }
  log += tests.stdout;
  if (timedOut) log += timeoutNotice(timeoutS);
  // Only the region between the nonce markers is graded; what is wrong around it is a finding.
  const checked = await phase('eval', () => channel.check({ output: tests.stdout, timedOut, timeoutS }));
  // The test command's exit code, printed after the end marker, goes with the region (run-evidence.ts).
  const exitCode = testExitCode(tests.stdout);
  const graded = exitCode === null ? checked.log : `${checked.log}${TEST_EXIT_CODE}: ${exitCode}\n`;
  const grade = gradeInstance({ instanceId, log: graded, eval: options.eval, patch, patchApplied: true });
  const details = {
    ...gradingDetails({
      eval: options.eval,
      view: grade.view,
      log,
      logLimitBytes,
      timedOut,
      integrity: { restored: restore.restored, findings: [...restore.findings, ...checked.findings] },
    }),
    eval_script: evalScript,
    eval_output_offset: evalOutputOffset,
  };
  return { ...grade, patch, log, testsTimedOut: timedOut, details };
}

/** SWE-bench does not run empty predictions: a null or empty patch is graded without a sandbox, never resolved. */
export function emptyPatchGrade(spec: EvalSpec, patch: string | null): SandboxGrade {
  const notGraded = (report: Partial<GradingReport>, notRun: string): SandboxGrade => ({
    report: {
      patch_is_None: false,
      patch_exists: false,
      patch_successfully_applied: false,
      resolved: false,
      ...report,
    },
    resolution: 'RESOLVED_NO',
    patch,
    log: '',
    testsTimedOut: false,
    details: untestedDetails(spec, notRun),
  });
  return patch === null ? notGraded({ patch_is_None: true }, 'no patch') : notGraded({}, 'the patch is empty');
}

/**
 * Runs one grading call; a server-side error (the image lacks bash, a file cannot be written) means grading
 * could not run: GRADING_FAILED (infra) with the phase in its details. Transport errors (the sandbox died)
 * pass through with the phase attached, so the caller can tell a sandbox that died while the patch's tests
 * ran from one that died before.
 */
async function phase<T>(name: GradingPhase, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (thrown) {
    if (thrown instanceof SwerexRuntimeError) {
      throw new RolloutError('GRADING_FAILED', `grading could not run (${name}): ${thrown.message}`, {
        cause: thrown,
        details: { phase: name },
      });
    }
    if (thrown instanceof RolloutError) Object.assign(thrown.details, { gradingPhase: name });
    throw thrown;
  }
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function isCommandTimeout(err: unknown): boolean {
  return err instanceof SwerexRuntimeError && err.code === 'SWEREX_COMMAND_TIMEOUT';
}

/** The grading phase a sandbox failure happened in, if it happened while grading. */
export function gradingPhaseOf(err: RolloutError): GradingPhase | undefined {
  const value = err.details.gradingPhase ?? err.details.phase;
  return value === 'setup' || value === 'apply' || value === 'eval' ? value : undefined;
}
