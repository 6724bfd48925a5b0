/**
 * Putting the test side back before the eval (docs/adversarial-grading.md, vector 9): list the patched tree's
 * changed paths in the grading sandbox, decide with restore-rules.ts, restore with restore-script.ts, and say
 * what was restored and found. Runs after the patch is applied and before the eval script, so no code of the
 * patch has run yet; the eval script then resets and applies the test patch as SWE-bench's does.
 */
import type { EvalSpec, IntegrityFinding } from '@rollout-fleet/shared';
import { CLEAN_GIT_ENV, type ExecShell } from './extract-patch.js';
import { patchPaths, planRestore } from './restore-rules.js';
import { LIST_CHANGES_SCRIPT, buildRestoreScript, parseNulList } from './restore-script.js';

const RESTORE_TIMEOUT_S = 120;

export type RestoreOutcome =
  | { ok: true; restored: string[]; findings: IntegrityFinding[] }
  /** The tree as the patch left it cannot be put back (the patch's doing: it is graded unresolved). */
  | { ok: false; message: string; findings: IntegrityFinding[] };

function bash(script: string, args: string[]) {
  return {
    command: ['/bin/bash', '--noprofile', '--norc', '-c', script, 'rf-restore', ...args],
    shell: false,
    env: { ...CLEAN_GIT_ENV },
    merge_output_streams: false,
    timeout: RESTORE_TIMEOUT_S,
  };
}

export async function restoreTestSide(
  shell: ExecShell,
  o: { repoDir: string; eval: Pick<EvalSpec, 'base_commit' | 'test_patch'>; untrackedSnapshot?: string },
): Promise<RestoreOutcome> {
  const base = o.eval.base_commit ?? 'HEAD';
  const listed = await shell.execute(bash(LIST_CHANGES_SCRIPT, [o.repoDir, base, o.untrackedSnapshot ?? '']));
  if (listed.exit_code !== 0) return failed(`listing the changed paths failed: ${snippet(listed.stderr)}`);
  const plan = planRestore({
    testPatchPaths: patchPaths(o.eval.test_patch ?? ''),
    changedPaths: parseNulList(listed.stdout),
  });
  if (plan.files.length === 0 && plan.sections.length === 0) return { ok: true, restored: [], findings: plan.findings };
  const ran = await shell.execute(bash(buildRestoreScript(plan), [o.repoDir, base]));
  if (ran.exit_code !== 0) return failed(`putting the test side back failed: ${snippet(ran.stderr)}`, plan.findings);
  return { ok: true, restored: [...new Set(parseNulList(ran.stdout, 'R '))].sort(), findings: plan.findings };
}

function failed(message: string, findings: IntegrityFinding[] = []): RestoreOutcome {
  const finding: IntegrityFinding = { code: 'RESTORE_FAILED', severity: 'violated', detail: message };
  return { ok: false, message, findings: [...findings, finding] };
}

function snippet(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
}
