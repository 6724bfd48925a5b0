/**
 * The patch-apply step of SWE-bench's `run_instance` (§5 step 2) as one bash script a sandbox can run:
 * the first command that exits 0 wins; each failed attempt leaves the tree as it left it (like the harness,
 * where `--reject` may have applied some hunks before `patch` runs). Prints `>>>>> Applied Patch:` and the
 * winning command's output, or `>>>>> Patch Apply Failed:` and the last output, and exits 0 / 1.
 */
import { shellQuote } from '@rollout-fleet/sandbox';
import { APPLY_PATCH_FAIL, APPLY_PATCH_PASS } from './log-markers.js';

export const APPLY_PATCH_COMMANDS: readonly string[] = [
  'git apply --verbose',
  'git apply --verbose --reject',
  'patch --batch --fuzz=5 -p1 -i',
];

export interface ApplyPatchScriptOptions {
  /** Repository checkout inside the sandbox. @defaultValue '/testbed' */
  repoDir?: string;
}

export function buildApplyPatchScript(patchPath: string, options: ApplyPatchScriptOptions = {}): string {
  const repoDir = shellQuote(options.repoDir ?? '/testbed');
  const commands = APPLY_PATCH_COMMANDS.map(shellQuote).join(' ');
  return [
    '#!/bin/bash',
    `cd ${repoDir} || { printf '%s:\\n%s\\n' ${shellQuote(APPLY_PATCH_FAIL)} "cannot cd to "${repoDir}; exit 1; }`,
    `patch_file=${shellQuote(patchPath)}`,
    "output=''",
    `for apply_cmd in ${commands}; do`,
    '  # Word splitting of $apply_cmd is intended: it holds a command and its flags.',
    '  if output=$($apply_cmd "$patch_file" 2>&1); then',
    `    printf '%s:\\n%s\\n' ${shellQuote(APPLY_PATCH_PASS)} "$output"`,
    '    exit 0',
    '  fi',
    `  printf 'Failed to apply patch to container: %s\\n' "$apply_cmd"`,
    'done',
    `printf '%s:\\n%s\\n' ${shellQuote(APPLY_PATCH_FAIL)} "$output"`,
    'exit 1',
    '',
  ].join('\n');
}
