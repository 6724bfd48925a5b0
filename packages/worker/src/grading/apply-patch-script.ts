/**
 * The patch-apply step (§5 step 2) as one bash script a sandbox can run, binary-safe and exact: `git apply`
 * first (binary hunks, renames, mode changes, symlinks, quoted names, CRLF as written; all or nothing), then
 * GNU `patch` for plain diffs whose context drifted, with `--forward` so that it never guesses `-R` and reverts a
 * hunk that already reads as applied (SWE-bench's `patch --batch` does: "Reversed (or previously applied) patch
 * detected! Assume -R? [y]"). SWE-bench's middle attempt, `git apply --reject`, is left out: it applies some
 * hunks and leaves the tree half-patched for the next command. Prints `>>>>> Applied Patch:` and the winning
 * command's output, or `>>>>> Patch Apply Failed:` and the last output, and exits 0 / 1. Before anything is
 * applied it may snapshot the untracked files, so the restore step can tell the files the patch created.
 */
import { shellQuote } from '@rollout-fleet/sandbox';
import { APPLY_PATCH_FAIL, APPLY_PATCH_PASS } from './log-markers.js';
import { untrackedSnapshotCommand } from './restore-script.js';

export const APPLY_PATCH_COMMANDS: readonly string[] = [
  'git apply --verbose',
  'patch --batch --forward --fuzz=5 -p1 -i',
];

export interface ApplyPatchScriptOptions {
  /** Repository checkout inside the sandbox. @defaultValue '/testbed' */
  repoDir?: string;
  /** Where to write the NUL-separated list of untracked files before applying (restore-script.ts). */
  untrackedSnapshot?: string;
}

export function buildApplyPatchScript(patchPath: string, options: ApplyPatchScriptOptions = {}): string {
  const repoDir = shellQuote(options.repoDir ?? '/testbed');
  const commands = APPLY_PATCH_COMMANDS.map(shellQuote).join(' ');
  return [
    '#!/bin/bash',
    `cd ${repoDir} || { printf '%s:\\n%s\\n' ${shellQuote(APPLY_PATCH_FAIL)} "cannot cd to "${repoDir}; exit 1; }`,
    ...(options.untrackedSnapshot === undefined ? [] : [untrackedSnapshotCommand(options.untrackedSnapshot)]),
    `patch_file=${shellQuote(patchPath)}`,
    "output=''",
    `for apply_cmd in ${commands}; do`,
    '  # Word splitting of $apply_cmd is intended: it holds a command and its flags.',
    '  if output=$($apply_cmd "$patch_file" 2>&1); then',
    `    printf '%s:\\n%s\\n' ${shellQuote(APPLY_PATCH_PASS)} "$output"`,
    '    exit 0',
    '  fi',
    `  printf 'Failed to apply patch to container: %s\\n%s\\n' "$apply_cmd" "$output"`,
    'done',
    `printf '%s:\\n%s\\n' ${shellQuote(APPLY_PATCH_FAIL)} "$output"`,
    'exit 1',
    '',
  ].join('\n');
}
