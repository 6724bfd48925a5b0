/**
 * The sandbox start command and its SWE-ReX auth token. Every sandbox gets a fresh token (as SWE-ReX
 * deployments do) unless the configured command carries its own. `exec` keeps the server on PID 1, so
 * KillSandbox's SIGTERM reaches it (anchors.md: a `curl | bash` launcher left sandboxes Terminating).
 */
import { randomUUID } from 'node:crypto';

export const DEFAULT_START_COMMAND = 'exec python3 -m swerex.server --port 8000 --auth-token {auth_token}';

export interface StartCommand {
  command: string;
  authToken: string;
}

/**
 * `template` may contain `{auth_token}` (replaced by a fresh token) or an explicit `--auth-token X`
 * (kept, and X is the token); otherwise the fresh token is appended as the trailing argument, which is
 * how install-script launchers (seed.md) take it.
 */
export function buildStartCommand(
  template: string = DEFAULT_START_COMMAND,
  token: string = randomUUID(),
): StartCommand {
  if (template.includes('{auth_token}'))
    return { command: template.replaceAll('{auth_token}', token), authToken: token };
  const explicit = /--auth-token(?:=|\s+)(?:'([^']*)'|"([^"]*)"|(\S+))/.exec(template);
  if (explicit) return { command: template, authToken: explicit[1] ?? explicit[2] ?? explicit[3] ?? '' };
  return { command: `${template} ${token}`, authToken: token };
}
