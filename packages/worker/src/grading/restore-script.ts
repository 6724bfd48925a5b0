/**
 * The two shell steps of putting the test side back (restore-rules.ts decides what, in between):
 * - the listing: the patched tree's changed paths, NUL-separated — tracked files that differ from the base
 *   commit (`git diff --name-only`) and files the patch created (untracked now but not in the snapshot the
 *   apply step took before applying; without a snapshot, untracked files git does not ignore);
 * - the restore: paths the base does not have are deleted first (so no checkout below writes through a link the
 *   patch made), paths it has are checked out at the base commit, and setup.cfg / pyproject.toml get the base's
 *   test-runner sections in place of theirs, in place, the rest of the file kept. Each path actually changed is printed
 *   as `R <path>` NUL-terminated; nothing else goes to stdout.
 *
 * Wire contract: SWE-ReX `POST /execute`, argv `/bin/bash --noprofile --norc -c SCRIPT rf-restore <repo> <base> …`,
 * `env` = CLEAN_GIT_ENV (extract-patch.ts): git by the system PATH, no global or system config, no hooks.
 * Both run before any code of the patch does, so what they see is the patch as applied.
 */
import { shellQuote } from '@rollout-fleet/sandbox';
import type { RestorePlan } from './restore-rules.js';

const GIT = "G=(git -c 'safe.directory=*' -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.quotepath=off)";

/** argv after the script: repo, base commit, the untracked-files snapshot (may be absent). */
export const LIST_CHANGES_SCRIPT = `set -u
repo=$1 base=$2 snap=$3
export LC_ALL=C
cd -- "$repo" || { echo "cannot enter $repo" >&2; exit 2; }
${GIT}
"\${G[@]}" rev-parse --verify -q "$base^{commit}" >/dev/null || { echo "no commit $base in $repo" >&2; exit 3; }
"\${G[@]}" diff --name-only -z --no-renames "$base" -- || exit 4
if [ -f "$snap" ]; then
  "\${G[@]}" ls-files -o -z | sort -z | comm -z -13 <(sort -z -- "$snap") - || exit 5
else
  "\${G[@]}" ls-files -o -z --exclude-standard || exit 5
fi
`;

/** The snapshot command the apply step runs before applying (apply-patch-script.ts). */
export function untrackedSnapshotCommand(snapshotPath: string): string {
  return `git -c 'safe.directory=*' ls-files -o -z > ${shellQuote(snapshotPath)} 2>/dev/null || rm -f ${shellQuote(snapshotPath)}`;
}

/**
 * awk merging one config file: the patched file (input) with each test-runner section's body replaced by the
 * base's (`basefile`), in place; test sections the base lacks dropped, those only the base has appended. Lines
 * before the first header belong to no section (kept). INI headers start at column 0 (iniconfig, which pytest
 * reads them with); TOML headers may be indented, and `[[…]]` arrays of tables count by their name.
 */
const SECTIONS_AWK = `function is_header(line) { return (kind == "cfg") ? (line ~ /^\\[/) : (line ~ /^[ \\t]*\\[/) }
function name_of(line,   h) { h = line; sub(/^[ \\t]*\\[+/, "", h); sub(/\\].*$/, "", h); gsub(/["' \\t]/, "", h); return h }
function is_test(name) {
  if (kind == "cfg") return name == "tool:pytest" || name == "pytest" || name ~ /^coverage:/
  return name ~ /^tool[.]pytest([.]|$)/ || name ~ /^tool[.]coverage([.]|$)/
}
BEGIN {
  cur = ""; n = 0
  while ((getline line < basefile) > 0) {
    if (is_header(line)) { nm = name_of(line); cur = is_test(nm) ? nm : ""; if (cur != "" && !(cur in body)) { order[++n] = cur; body[cur] = "" } }
    if (cur != "") body[cur] = body[cur] line "\\n"
  }
  t = 0
}
{
  if (is_header($0)) { nm = name_of($0); t = is_test(nm); if (t && (nm in body) && !(nm in done)) { printf "%s", body[nm]; done[nm] = 1 } }
  if (!t) print
}
END { for (i = 1; i <= n; i++) if (!(order[i] in done)) printf "%s", body[order[i]] }`;

const RESTORE_PRELUDE = `set -u
repo=$1 base=$2
export LC_ALL=C
cd -- "$repo" || { echo "cannot enter $repo" >&2; exit 2; }
${GIT}
at_base() { "\${G[@]}" cat-file -e "$base:$1" 2>/dev/null; }
report() { printf 'R %s\\0' "$1"; }
merge_sections() { awk -v kind="$2" -v basefile="$3" ${shellQuote(SECTIONS_AWK)} "$1"; }
restore_sections() {
  local f=$1 kind=$2 base_copy merged cur=/dev/null
  base_copy=$(mktemp) && merged=$(mktemp) || exit 6
  if at_base "$f"; then "\${G[@]}" show "$base:$f" > "$base_copy" || exit 6; fi
  if [ -f "$f" ] && [ ! -L "$f" ]; then cur=$f; fi
  merge_sections "$cur" "$kind" "$base_copy" > "$merged" || exit 6
  if [ "$cur" = /dev/null ] && [ ! -s "$merged" ]; then rm -f -- "$base_copy" "$merged"; return 0; fi
  if ! cmp -s -- "$merged" "$f"; then rm -rf -- "$f" && cat -- "$merged" > "$f" || exit 6; report "$f"; fi
  rm -f -- "$base_copy" "$merged"
}
`;

/** The restore step for `plan`; argv after the script: repo, base commit. */
export function buildRestoreScript(plan: RestorePlan): string {
  const files = plan.files.map((e) => shellQuote(e.path)).join(' ');
  const lines = [
    RESTORE_PRELUDE,
    `files=(${files})`,
    // What the base does not have goes first: a symlink the patch made (`tests -> /elsewhere`) is gone before
    // anything is checked out beneath it.
    'for f in "${files[@]}"; do',
    '  if ! at_base "$f" && { [ -e "$f" ] || [ -L "$f" ]; }; then rm -rf -- "$f" || exit 3; report "$f"; fi',
    'done',
    'for f in "${files[@]}"; do',
    '  at_base "$f" || continue',
    '  if [ -L "$f" ] || [ ! -e "$f" ] || ! "${G[@]}" diff --quiet "$base" -- "$f" 2>/dev/null; then',
    '    rm -rf -- "$f"; "${G[@]}" checkout -q "$base" -- "$f" || exit 4; report "$f"',
    '  fi',
    'done',
  ];
  for (const entry of plan.sections) {
    const kind = entry.path.endsWith('.toml') ? 'toml' : 'cfg';
    lines.push(`restore_sections ${shellQuote(entry.path)} ${kind}`);
  }
  lines.push('exit 0', '');
  return lines.join('\n');
}

/** `R a\0R b\0` → [a, b]; NUL-separated listings → paths. */
export function parseNulList(stdout: string, prefix = ''): string[] {
  return stdout
    .split('\0')
    .filter((item) => item !== '' && item.startsWith(prefix))
    .map((item) => item.slice(prefix.length));
}
