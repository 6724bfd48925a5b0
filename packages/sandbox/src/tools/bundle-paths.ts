/**
 * Where the in-sandbox tool bundle lives on the host and where it is installed inside a sandbox.
 * Layout of the bundle: `<root>/bin/{execute_bash,str_replace_editor}` (executables), `<root>/lib/` (their
 * Python package), `<root>/README.md`. Installing = upload the bundle directory to TOOL_INSTALL_ROOT,
 * `chmod +x TOOL_INSTALL_DIR/*` and prepend TOOL_INSTALL_DIR to PATH (SWE-agent puts bundles under /root/tools/).
 */
import { fileURLToPath } from 'node:url';

/** Absolute host path of packages/sandbox/tool-bundle (the same from src/tools and dist/tools). */
export const TOOL_BUNDLE_DIR: string = fileURLToPath(new URL('../../tool-bundle', import.meta.url));

/** Directory the bundle directory is uploaded to inside the sandbox. */
export const TOOL_INSTALL_ROOT = '/root/tools/rollout-fleet';

/** Directory holding the tool executables inside the sandbox; goes on PATH. */
export const TOOL_INSTALL_DIR = `${TOOL_INSTALL_ROOT}/bin`;

/** The editor's undo history inside the sandbox (HOME=/root); override with ROLLOUT_FLEET_EDITOR_HISTORY. */
export const EDITOR_HISTORY_FILE = '/root/.rollout-fleet/editor-history.json';
