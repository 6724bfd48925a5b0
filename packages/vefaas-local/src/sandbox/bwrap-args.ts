/**
 * The bubblewrap recipe: host system read-only, private writable /testbed, /tmp, /root, no other host
 * directories, every namespace unshared (network only with `network`), all capabilities dropped, and the
 * jail dies with its parent.
 */
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { JAIL, RUNTIME_DIR, type StateLayout } from './jail-layout.js';

/** Top-level system paths that are symlinks into /usr on merged-/usr systems, or real dirs elsewhere. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** Readable by uid 0 even without capabilities; hidden because the jail has no business with them. */
const MASKED_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-'];

/** Read-only system binds shared by the sandbox recipe and the isolation probe. */
export function systemBindArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  args.push('--ro-bind', '/etc', '/etc');
  for (const file of MASKED_FILES) if (existsSync(file)) args.push('--ro-bind', '/dev/null', file);
  args.push('--proc', '/proc', '--dev', '/dev');
  return args;
}

export function namespaceArgs(network: boolean): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (network) args.push('--share-net');
  return args;
}

export interface BwrapArgsOptions {
  layout: StateLayout;
  network: boolean;
  env: Record<string, string>;
  hostname: string;
  /** Command run inside the jail (jail paths). */
  command: string[];
}

export function bwrapArgs(options: BwrapArgsOptions): string[] {
  const { layout } = options;
  const args = [...namespaceArgs(options.network), ...systemBindArgs()];
  args.push(
    '--bind', layout.testbed, JAIL.testbed,
    '--bind', layout.tmp, JAIL.tmp,
    '--bind', layout.home, JAIL.home,
    '--bind', layout.run, JAIL.run,
    '--ro-bind', RUNTIME_DIR, JAIL.runtime,
    // Everything else (the jail's own root tmpfs: /, /opt, /run) is read-only.
    '--remount-ro', '/',
    '--hostname', options.hostname,
    '--chdir', JAIL.testbed,
    '--clearenv',
  );
  for (const [key, value] of Object.entries(options.env)) args.push('--setenv', key, value);
  args.push('--', ...options.command);
  return args;
}
