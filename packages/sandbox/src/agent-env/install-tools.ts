/**
 * Installs the tool bundle (packages/sandbox/tool-bundle) into a sandbox: upload the directory (zipped
 * on the wire, unzipped by the server), make the executables runnable, put them on the session's PATH.
 */
import type { ToolName } from '@rollout-fleet/shared';
import type { SwerexClient } from '../swerex/swerex-client.js';
import { TOOL_BUNDLE_DIR, TOOL_INSTALL_DIR, TOOL_INSTALL_ROOT } from '../tools/bundle-paths.js';

/** The session line that puts the tools first on PATH; replayed in every new session of the sandbox. */
export const TOOL_PATH_EXPORT = `export PATH="${TOOL_INSTALL_DIR}:$PATH" && hash -r`;

/**
 * The session command that finishes an install. The tools are Python scripts run by the image's own `python3`
 * (as on veFaaS): an image without one fails the set-up with a reason that says so instead of every later call.
 */
export const TOOL_INSTALL_COMMAND =
  `if ! command -v python3 >/dev/null 2>&1; then echo "the tools need python3 on the image's PATH ($PATH); this image has none"; false; ` +
  `else chmod +x ${TOOL_INSTALL_DIR}/* && ${TOOL_PATH_EXPORT}; fi`;

export async function installToolBundle(options: {
  swerex: SwerexClient;
  names: readonly ToolName[];
  run: (command: string) => Promise<string>;
}): Promise<void> {
  if (options.names.length === 0) return;
  await options.swerex.upload({ source: TOOL_BUNDLE_DIR, targetPath: TOOL_INSTALL_ROOT, unzip: true, reuseZip: true });
  await options.run(TOOL_INSTALL_COMMAND);
}
