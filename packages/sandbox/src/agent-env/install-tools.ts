/**
 * Installs the tool bundle (packages/sandbox/tool-bundle) into a sandbox: upload the directory (zipped
 * on the wire, unzipped by the server), make the executables runnable, put them on the session's PATH.
 */
import type { ToolName } from '@rollout-fleet/shared';
import type { SwerexClient } from '../swerex/swerex-client.js';
import { TOOL_BUNDLE_DIR, TOOL_INSTALL_DIR, TOOL_INSTALL_ROOT } from '../tools/bundle-paths.js';

/** The session line that puts the tools first on PATH; replayed in every new session of the sandbox. */
export const TOOL_PATH_EXPORT = `export PATH="${TOOL_INSTALL_DIR}:$PATH" && hash -r`;

export async function installToolBundle(options: {
  swerex: SwerexClient;
  names: readonly ToolName[];
  run: (command: string) => Promise<string>;
}): Promise<void> {
  if (options.names.length === 0) return;
  await options.swerex.upload({ source: TOOL_BUNDLE_DIR, targetPath: TOOL_INSTALL_ROOT, unzip: true, reuseZip: true });
  await options.run(`chmod +x ${TOOL_INSTALL_DIR}/* && ${TOOL_PATH_EXPORT}`);
}
