/**
 * Our own commands in the model's bash session — the environment, tools on PATH, the repository directory, the
 * end-of-episode sync — read without SWE-ReX's exit-code fetch. That fetch waits 1 s for `EXITCODEEND` (the
 * reference's timing, kept for the model's commands); on a starved sandbox it runs out, the observation has
 * exit_code null and the session is left a prompt behind, so the next command "returns" at the stale prompt
 * before it ran. A set-up command is therefore sent with `check: "ignore"` on the prompt path (one line, one
 * prompt: no exit-code step to miss) and followed by a marker that carries a fresh nonce and the command's `$?`.
 * The marker is assembled by `printf` at run time, so neither the command's text (echoed by a terminal the model
 * set to echo) nor anything printed earlier can fake it: the marker in the output means the command ran, and
 * its status is the shell's own; no marker means the outcome is unknown (a session out of step, a timeout).
 */
import { randomBytes } from 'node:crypto';
import { RolloutError } from '@rollout-fleet/shared';

export type SetupOutcome =
  /** The marker came back: the command ran in this session and `status` is its `$?`; `output` is what it printed. */
  | { ran: true; status: number; output: string }
  /** No marker: whether (and when) the command ran is unknown. */
  | { ran: false; output: string };

const MARKER = 'RF_SETUP';

export interface MarkedCommand {
  /** The line to send: the command, then the marker. */
  command: string;
  read(output: string): SetupOutcome;
}

/** `command` (one line, no trailing `&`) followed by the marker; `nonce` defaults to 16 random hex digits. */
export function markCommand(command: string, nonce: string = randomBytes(8).toString('hex')): MarkedCommand {
  const pattern = new RegExp(`${MARKER}_${nonce}_(\\d+)\\r?\\n?`);
  return {
    command: `${command} ; printf '${MARKER}_%s_%s\\n' ${nonce} "$?"`,
    read: (output) => {
      const found = pattern.exec(output);
      if (!found) return { ran: false, output };
      return { ran: true, status: Number(found[1]), output: output.slice(0, found.index) };
    },
  };
}

/**
 * A command that only bash's own parser accepts (`[[`): SWE-ReX's splitter fails on it and sends it with the
 * fallback terminator, waiting for `UNIQUESTRING29234` instead of the prompt — so the wait skips every stale
 * prompt a session out of step still holds. Used to catch up with such a session (AgentEnv.settle).
 */
export const FALLBACK_PATH_PREFIX = '[[ -n rf ]]';

/** The status of a set-up command; throws SESSION_SETUP_AMBIGUOUS when its outcome is unknown. */
export function setupStatus(outcome: SetupOutcome, what: string): number {
  if (outcome.ran) return outcome.status;
  throw new RolloutError('SESSION_SETUP_AMBIGUOUS', `${what}: no end marker came back (${snippet(outcome.output)})`);
}

function snippet(output: string): string {
  const trimmed = output.trim();
  if (trimmed === '') return 'no output';
  return `output: ${trimmed.length > 300 ? `${trimmed.slice(0, 300)}…` : trimmed}`;
}
