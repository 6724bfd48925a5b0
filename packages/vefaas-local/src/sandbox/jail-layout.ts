/**
 * Where things live: host-side state directory layout and the paths the server sees inside the jail.
 *
 * <stateRoot>/<sandboxId>/
 *   testbed/  → /testbed with isolation 'none' (copy of the image template; the server's cwd)
 *   tmp/      → /tmp      (isolation 'none')
 *   root/     → /root     (HOME; isolation 'none')
 *   run/      holds swerex.sock, bound outside the jail and inherited by the server (not mounted inside)
 *   etc/      → /etc/passwd, /etc/group, /etc/hosts inside the jail (generated)
 *   server.log  (server stdout/stderr; not visible inside)
 * In the bubblewrap jail /testbed, /tmp and /root are private tmpfs mounts instead (bounded; nothing written
 * there reaches the host's disk) and /testbed is filled from the image at start (read-only at /opt/swerex-image).
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
  image: '/opt/swerex-image',
  socket: '/run/swerex/swerex.sock',
} as const;

export interface StateLayout {
  stateDir: string;
  testbed: string;
  tmp: string;
  home: string;
  run: string;
  etc: string;
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
    etc: join(stateDir, 'etc'),
    socketPath: join(run, 'swerex.sock'),
    logPath: join(stateDir, 'server.log'),
  };
}

/** sun_path is 108 bytes including the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
