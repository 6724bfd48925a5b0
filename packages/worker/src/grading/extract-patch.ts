/**
 * Taking the patch out of the agent's sandbox so that nothing the model did to its shell or to the
 * repository's git metadata can steer it (docs/adversarial-grading.md).
 *
 * Wire contract: SWE-ReX `POST /execute` — one subprocess outside every bash session, argv list
 * (`shell: false`), `env` replacing the server's whole environment:
 *   probe (before the first step):  `/bin/bash --noprofile --norc -c PROBE rf-probe <repo>`
 *     → stdout `repo <head sha> <objects dir>` | `none` (no git repository / no git)
 *   extract (after the last step):  `/bin/bash --noprofile --norc -c EXTRACT rf-extract <repo> <head> <objects> <max>`
 *     → stdout = the patch (`git diff --binary` of the working tree against the starting commit, new files, binary
 *       files, modes and symlinks included, so that `git apply` rebuilds the tree exactly),
 *       exit 0; any other exit = the repository as the model left it cannot give a patch (model).
 * The extraction never reads the agent's `.git/config`, hooks, index or `.git/info/attributes`: it uses a
 * throw-away git directory in /tmp whose object store borrows the repository's objects (alternates), with
 * its own config (no hooks, no fsmonitor, no CRLF conversion), attributes that unset every attribute
 * (no filter, textconv, ident, eol or encoding conversions) and no system/global config. Only the work
 * tree is read — which is exactly what the model's patch is.
 */
import { RolloutError, toFailure, type Failure } from '@rollout-fleet/shared';
import { SwerexRuntimeError, type CommandInput, type CommandResponse } from '@rollout-fleet/sandbox';

export interface ExecShell {
  execute(command: CommandInput): Promise<CommandResponse>;
}

/** Where the repository started: the commit the patch is taken against, and where its objects live. */
export interface RepoBase {
  head: string;
  objectsDir: string;
}

export type PatchExtraction = { ok: true; patch: string } | { ok: false; failure: Failure };

/** Patches larger than this are refused (model): nobody's fix is 8 MiB, a vendored tree or a binary dump is. */
export const MAX_PATCH_BYTES = 8 * 1024 * 1024;
const EXTRACT_TIMEOUT_S = 300;
const PROBE_TIMEOUT_S = 60;

/**
 * The whole process environment of both scripts: no inherited functions (BASH_FUNC_*), aliases, BASH_ENV/ENV,
 * PATH, GIT_* or locale surprises; git reads neither system nor global config nor system attributes.
 */
export const CLEAN_GIT_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/bin:/bin',
  HOME: '/nonexistent',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
};

/** Absolute git, found among the system locations only (never through anyone's PATH). */
const FIND_GIT =
  'git=; for g in /usr/bin/git /bin/git /usr/local/bin/git; do if [ -x "$g" ]; then git=$g; break; fi; done';

/** Command-line config wins over every file git could still read; safe.directory is only honoured here. */
const GIT_FLAGS =
  "-c 'safe.directory=*' -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.attributesFile=/dev/null";

const PROBE_SCRIPT = `set -u
repo=$1
${FIND_GIT}
[ -n "$git" ] || { printf 'none\\n'; exit 0; }
G=("$git" ${GIT_FLAGS} -C "$repo")
if [ "$("\${G[@]}" rev-parse --is-inside-work-tree 2>/dev/null)" != true ]; then printf 'none\\n'; exit 0; fi
head=$("\${G[@]}" rev-parse --verify -q 'HEAD^{commit}') || { echo "the repository at $repo has no commit to diff against" >&2; exit 3; }
common=$("\${G[@]}" rev-parse --git-common-dir) || exit 4
case "$common" in /*) ;; *) common="$repo/$common" ;; esac
objects=$(cd -- "$common/objects" && pwd -P) || exit 5
printf 'repo %s %s\\n' "$head" "$objects"
`;

const EXTRACT_SCRIPT = `set -u
repo=$1 head=$2 objects=$3 max=$4
${FIND_GIT}
[ -n "$git" ] || { echo "git is gone from the sandbox" >&2; exit 10; }
[ -d "$objects" ] || { echo "the repository's object store $objects is gone" >&2; exit 11; }
cd -- "$repo" || { echo "cannot enter $repo" >&2; exit 12; }
tmp=$(mktemp -d /tmp/rf-extract.XXXXXX) || { echo "cannot create a temporary directory in /tmp" >&2; exit 13; }
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$tmp/git/objects/info" "$tmp/git/refs" "$tmp/git/info" || exit 14
printf '%s\\n' "$objects" > "$tmp/git/objects/info/alternates" || exit 15
printf 'ref: refs/heads/rf-extract\\n' > "$tmp/git/HEAD" || exit 15
printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tautocrlf = false\\n\\tsafecrlf = false\\n' > "$tmp/git/config" || exit 15
printf '* !text !eol !crlf !ident !filter !diff !merge !working-tree-encoding\\n' > "$tmp/git/info/attributes" || exit 15
export GIT_DIR="$tmp/git" GIT_WORK_TREE="$repo" GIT_INDEX_FILE="$tmp/index"
G=("$git" ${GIT_FLAGS})
"\${G[@]}" read-tree "$head" || { echo "cannot read the starting commit $head" >&2; exit 16; }
"\${G[@]}" add -A || { echo "git add of the working tree failed" >&2; exit 17; }
"\${G[@]}" diff --cached --binary --no-color --no-ext-diff --no-textconv "$head" > "$tmp/patch" || { echo "git diff failed" >&2; exit 18; }
size=$(wc -c < "$tmp/patch")
[ "$size" -le "$max" ] || { echo "the patch is $size bytes, over the limit of $max" >&2; exit 19; }
cat -- "$tmp/patch"
`;

function bash(script: string, name: string, args: string[], timeoutS: number): CommandInput {
  return {
    command: ['/bin/bash', '--noprofile', '--norc', '-c', script, name, ...args],
    shell: false,
    env: { ...CLEAN_GIT_ENV },
    timeout: timeoutS,
  };
}

/**
 * Before the first step: where the repository is and which commit it is at. null when `repoDir` holds no git
 * repository (a patch is then not defined). Runs before the model has touched anything, so a failure here is
 * the image's or the sandbox's (infra).
 */
export async function probeRepository(shell: ExecShell, repoDir: string): Promise<RepoBase | null> {
  let ran: CommandResponse;
  try {
    ran = await shell.execute(bash(PROBE_SCRIPT, 'rf-probe', [repoDir], PROBE_TIMEOUT_S));
  } catch (thrown) {
    if (!(thrown instanceof SwerexRuntimeError)) throw thrown;
    throw new RolloutError(
      'SANDBOX_START_FAILED',
      `could not inspect the repository at ${repoDir}: ${thrown.message}`,
      { cause: thrown },
    );
  }
  const line = ran.stdout.trim();
  // `none`: no git or no repository there. An empty answer comes only from a runtime that runs no commands
  // (vefaas-local's emulated mode): there is no repository to speak of either.
  if (ran.exit_code === 0 && (line === 'none' || line === '')) return null;
  const match = /^repo ([0-9a-f]{40,64}) (\/.*)$/.exec(line);
  if (ran.exit_code !== 0 || !match) {
    throw new RolloutError(
      'SANDBOX_START_FAILED',
      `could not inspect the repository at ${repoDir}: ${snippet(ran.stderr || ran.stdout)}`,
      {
        details: { exitCode: ran.exit_code },
      },
    );
  }
  return { head: match[1] as string, objectsDir: match[2] as string };
}

/**
 * After the last step: the working tree's changes against the starting commit, new files included (what
 * SWE-agent's submit collects, without going through the model's shell or git metadata). A sandbox that
 * answers but cannot give a patch is the model's doing (deleted .git or git, full disk, a patch over
 * MAX_PATCH_BYTES, a process killing git): `{ ok: false }` with a model-class failure, graded as no patch.
 * A sandbox that does not answer throws its infra error.
 */
export async function extractPatch(
  shell: ExecShell,
  options: { repoDir: string; base: RepoBase; maxBytes?: number },
): Promise<PatchExtraction> {
  const max = options.maxBytes ?? MAX_PATCH_BYTES;
  const args = [options.repoDir, options.base.head, options.base.objectsDir, String(max)];
  let ran: CommandResponse;
  try {
    ran = await shell.execute(bash(EXTRACT_SCRIPT, 'rf-extract', args, EXTRACT_TIMEOUT_S));
  } catch (thrown) {
    // The server ran our request and reported why it could not (no /bin/bash, timeout, fork failure).
    if (!(thrown instanceof SwerexRuntimeError)) throw thrown;
    return { ok: false, failure: extractionFailure(`the extraction command could not run: ${thrown.message}`) };
  }
  if (ran.exit_code !== 0) {
    return { ok: false, failure: extractionFailure(`exit ${ran.exit_code}: ${snippet(ran.stderr || ran.stdout)}`) };
  }
  return { ok: true, patch: ran.stdout };
}

function extractionFailure(message: string): Failure {
  return toFailure(new RolloutError('PATCH_EXTRACTION_FAILED', `the patch could not be extracted (${message})`));
}

function snippet(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed;
}
