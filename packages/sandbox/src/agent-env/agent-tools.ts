/**
 * Session set-up for an episode's repository and its recorded agent's tools, run after the tool bundle is
 * installed: the session moves into `repo_dir`, and a SWE-agent tool bundle (tool-bundle/swe-agent/<bundle>/bin)
 * goes on PATH with the variables its tools read (release line, WINDOW, OVERLAP, ROOT) and an empty registry —
 * what SWE-agent's own install and reset steps leave behind (tools.md §1.2).
 */
import type { SweAgentToolBundle } from '@rollout-fleet/shared';
import { shellQuote } from '../tools/shell-quote.js';
import { TOOL_INSTALL_ROOT } from '../tools/bundle-paths.js';

/** Where the SWE-agent bundles sit inside the sandbox (uploaded with the rest of the tool bundle). */
export const SWE_AGENT_INSTALL_ROOT = `${TOOL_INSTALL_ROOT}/swe-agent`;

/**
 * PATH, variables and a fresh registry for the bundles, in SWE-agent's install order (each bundle is prepended,
 * so a later bundle's tool wins a name clash, e.g. `edit`).
 */
export function sweAgentSetupCommand(bundle: SweAgentToolBundle, repoDir: string): string {
  const dirs = bundleDirs(bundle);
  return [
    ...(dirs.length > 0 ? [`chmod +x ${dirs.map((dir) => `${dir}/*`).join(' ')}`] : []),
    sweAgentSessionCommand(bundle, repoDir),
    `printf '{}' > "\${SWE_AGENT_ENV_FILE:-$HOME/.swe-agent-env}"`,
  ].join(' && ');
}

/**
 * What a new shell session needs to use bundles that are already installed: their variables and PATH. The
 * registry is a file and stays as the old session left it (open file, window position), as SWE-agent's
 * tools would find it.
 */
export function sweAgentSessionCommand(bundle: SweAgentToolBundle, repoDir: string): string {
  const dirs = bundleDirs(bundle);
  const path = [...dirs].reverse().join(':');
  const variables: Record<string, string> = {
    ROLLOUT_FLEET_SWE_AGENT: bundle.version,
    WINDOW: String(bundle.window),
    OVERLAP: String(bundle.overlap),
    ROOT: repoDir,
  };
  return [
    ...Object.entries(variables).map(([name, value]) => `export ${name}=${shellQuote(value)}`),
    ...(dirs.length > 0 ? [`export PATH=${path}:"$PATH"`] : []),
    'hash -r',
  ].join(' && ');
}

function bundleDirs(bundle: SweAgentToolBundle): string[] {
  return bundle.bundles.map((name) => `${SWE_AGENT_INSTALL_ROOT}/${name}/bin`);
}
