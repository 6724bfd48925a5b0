/**
 * Before the patch is taken, every process the model left running in its sandbox is stopped (SIGSTOP, then
 * SIGKILL, whole trees, in rounds until none is left), so nothing it started can act while the patch is taken —
 * rewrite the tree, kill the sandbox at that moment, or race the extraction (docs/adversarial-grading.md,
 * "Never 0 for infra").
 *
 * Which processes: our script runs as an SWE-ReX `/execute` subprocess, so its parent is the SWE-ReX server. Every
 * process that started no earlier than the server (its start time in /proc/<pid>/stat), other than this script
 * and its ancestors (the server and whatever started it), is the model's: descendants of the server (sessions,
 * their jobs) and anything they daemonised (reparented to init). Whatever the platform started before the server
 * is left alone. Where the sandbox shares the host's pid namespace (vefaas-local without isolation: kthreadd is
 * pid 2), only the server's descendants are stopped: the host's other processes started since are not the model's.
 * Bash builtins only inside the loop (`read`, `kill`): a forked helper would be a process of our own
 * in the list. Zombies are skipped (already dead, reaped by their parent).
 *
 * Wire contract: SWE-ReX `POST /execute`, argv `/bin/bash --noprofile --norc -c STOP rf-stop`, the clean
 * environment; stdout `stopped <n> <rounds>`, exit 0, or exit 3 with `survivors <pids>`.
 */
import type { Logger } from '@rollout-fleet/shared';
import type { ExecShell } from './extract-patch.js';
import { CLEAN_GIT_ENV } from './extract-patch.js';

const STOP_TIMEOUT_S = 60;
const ROUNDS = 50;

/** Field 22 of /proc/<pid>/stat (start time); fields after `) ` start at 3. */
export const STOP_SCRIPT = `set -u
fields() { local line; read -r line < "/proc/$1/stat" 2>/dev/null || return 1; F=(\${line##*) }); }
declare -A keep
p=$$
while [ "$p" -gt 0 ]; do
  keep[$p]=1
  fields "$p" || break
  [ "\${F[1]}" = "$p" ] && break
  p=\${F[1]}
done
fields "$PPID" || { echo "no server"; exit 3; }
since=\${F[19]}
server=$PPID
# kthreadd as pid 2 means the host's own pid namespace (an unisolated sandbox): there only the server's descendants
# are the model's, never whatever else the host started since.
shared=0
read -r k < /proc/2/stat 2>/dev/null && case "$k" in "2 (kthreadd) "*) shared=1 ;; esac
descends() { local q=$1 n; for ((n = 0; n < 256; n++)); do fields "$q" || return 1; [ "\${F[1]}" = "$server" ] && return 0; [ "\${F[1]}" -le 1 ] && return 1; q=\${F[1]}; done; return 1; }
stopped=0
for ((round = 1; round <= ${ROUNDS}; round++)); do
  victims=()
  for d in /proc/[0-9]*; do
    pid=\${d#/proc/}
    [ -n "\${keep[$pid]:-}" ] && continue
    fields "$pid" || continue
    [ "\${F[0]}" = Z ] && continue
    [ "\${F[19]}" -lt "$since" ] && continue
    [ "$shared" = 1 ] && ! descends "$pid" && continue
    victims+=("$pid")
  done
  [ \${#victims[@]} -eq 0 ] && { echo "stopped $stopped $round"; exit 0; }
  kill -STOP "\${victims[@]}" 2>/dev/null
  kill -KILL "\${victims[@]}" 2>/dev/null
  stopped=$((stopped + \${#victims[@]}))
done
echo "survivors \${victims[*]}"
exit 3`;

export async function stopModelProcesses(shell: ExecShell, logger: Logger): Promise<void> {
  const ran = await shell.execute({
    command: ['/bin/bash', '--noprofile', '--norc', '-c', STOP_SCRIPT, 'rf-stop'],
    shell: false,
    env: { ...CLEAN_GIT_ENV },
    merge_output_streams: true,
    timeout: STOP_TIMEOUT_S,
  });
  const said = ran.stdout.trim();
  if (ran.exit_code === 0) logger.debug({ said }, "the model's processes were stopped before the patch was taken");
  else
    logger.warn({ said, exitCode: ran.exit_code }, "some of the model's processes survived SIGKILL before extraction");
}
