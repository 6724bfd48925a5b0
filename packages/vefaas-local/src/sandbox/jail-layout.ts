/**
 * Where things live: host-side state directory layout and the paths the server sees inside the jail.
 *
 * <stateRoot>/<sandboxId>/
 *   testbed/  → /testbed (copy of the image template; the server's cwd)
 *   tmp/      → /tmp
 *   root/     → /root (HOME)
 *   run/      → /run/swerex (holds swerex.sock, reached from the host)
 *   server.log  (server stdout/stderr; not visible inside)
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** packages/vefaas-local/runtime, from src/sandbox/ (vitest, tsx) and dist/sandbox/ (built) alike. */
export const RUNTIME_DIR = fileURLToPath(new URL('../../runtime/', import.meta.url));
export const SERVER_SCRIPT = 'swerex_server.py';

export const JAIL = {
  testbed: '/testbed',
  tmp: '/tmp',
  home: '/root',
  run: '/run/swerex',
  runtime: '/opt/swerex-local',
  socket: '/run/swerex/swerex.sock',
} as const;

export interface StateLayout {
  stateDir: string;
  testbed: string;
  tmp: string;
  home: string;
  run: string;
  socketPath: string;
  logPath: string;
}

export function stateLayout(stateRoot: string, sandboxId: string): StateLayout {
  const stateDir = join(stateRoot, sandboxId);
  const run = join(stateDir, 'run');
  return {
    stateDir,
    testbed: join(stateDir, 'testbed'),
    tmp: join(stateDir, 'tmp'),
    home: join(stateDir, 'root'),
    run,
    socketPath: join(run, 'swerex.sock'),
    logPath: join(stateDir, 'server.log'),
  };
}

/** sun_path is 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
