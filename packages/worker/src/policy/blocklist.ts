/**
 * SWE-agent's blocklist of interactive programs (tools.md §5.2): such a command would wait for a keyboard that
 * does not exist, so it is not run and the model is told it is not supported (counted like a format error).
 * Matching is SWE-agent's: plain string prefixes (so `vi` also blocks `view…`), exact names, and radare2/r2 unless
 * given a command with `-c`.
 */
const BLOCKED_PREFIXES = ['vim', 'vi', 'emacs', 'nano', 'nohup', 'gdb', 'less', 'tail -f', 'python -m venv', 'make'];
const BLOCKED_EXACT = new Set([
  'python',
  'python3',
  'ipython',
  'bash',
  'sh',
  '/bin/bash',
  '/bin/sh',
  'nohup',
  'vi',
  'vim',
  'emacs',
  'nano',
  'su',
]);
const RADARE_WITH_COMMAND = /\b(?:radare2)\b.*\s+-c\s+.*/;

/** The observation for a blocked action, worded as SWE-agent words it. */
export function blockedObservation(action: string): string {
  return `Operation '${action}' is not supported by this environment.`;
}

/** Whether a bash action (already trimmed) is on the blocklist. */
export function isBlockedCommand(action: string): boolean {
  if (BLOCKED_EXACT.has(action)) return true;
  if (BLOCKED_PREFIXES.some((prefix) => action.startsWith(prefix))) return true;
  const first = action.split(/\s+/, 1)[0];
  if ((first === 'radare2' || first === 'r2') && !RADARE_WITH_COMMAND.test(action)) return true;
  return false;
}
