/**
 * The bubblewrap recipe: host system read-only, only the parts of /etc a shell, Python and git read, every
 * writable directory (/testbed, /tmp, /root) a private tmpfs of bounded size, no other host directories, every
 * namespace unshared (network only with `network`), all capabilities dropped, and the jail dies with its parent.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { JAIL, RUNTIME_DIR, type StateLayout } from './jail-layout.js';

/** Top-level system paths that are symlinks into /usr on merged-/usr systems, or real dirs elsewhere. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What the runtime reads from /etc: the dynamic loader's cache, name-service and locale/time settings, the
 * alternatives symlinks (`awk`, `editor`, ...), shell start-up files, terminfo, TLS roots (certificates only:
 * /etc/ssl/private stays out) and Debian's python3.X directories (sitecustomize). Not bound: shadow files, SSH
 * host keys, package-manager credentials (pip.conf, npmrc, apt auth), cron, sudoers — nothing there is needed.
 * passwd, group and hosts are generated per sandbox (no host accounts or host names inside).
 */
const ETC_ENTRIES = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'debian_version',
  'gai.conf',
  'host.conf',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'locale.alias',
  'localtime',
  'magic',
  'magic.mime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'pki/tls/certs',
  'profile',
  'protocols',
  'services',
  'shells',
  'ssl/certs',
  'ssl/openssl.cnf',
  'terminfo',
  'timezone',
];
/** Only with network access. */
const ETC_NETWORK_ENTRIES = ['resolv.conf'];
/** Files written per sandbox into `<state>/etc` (see writeJailEtc). */
export const GENERATED_ETC_FILES = ['passwd', 'group', 'hosts'];

function etcEntries(network: boolean): string[] {
  let python: string[] = [];
  try {
    python = readdirSync('/etc').filter((name) => /^python3(\.\d+)?$/.test(name));
  } catch {
    // no /etc: nothing to bind
  }
  return [...ETC_ENTRIES, ...python, ...(network ? ETC_NETWORK_ENTRIES : [])];
}

export interface SystemBindOptions {
  network: boolean;
  /** Host directory holding the generated passwd, group and hosts (absent in the isolation probe). */
  etcDir?: string;
}

/** Read-only system binds shared by the sandbox recipe and the isolation probe. */
export function systemBindArgs(options: SystemBindOptions): string[] {
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
  for (const entry of etcEntries(options.network)) {
    const path = join('/etc', entry);
    if (existsSync(path)) args.push('--ro-bind', path, path);
  }
  if (options.etcDir !== undefined) {
    for (const file of GENERATED_ETC_FILES) args.push('--ro-bind', join(options.etcDir, file), join('/etc', file));
  }
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
  /** Size of each writable tmpfs, bytes; undefined when bwrap cannot size a tmpfs (then only the memory limit bounds it). */
  tmpfsBytes: number | undefined;
  /** bwrap knows `--perms` (else /tmp keeps tmpfs's default mode; the jail's single user owns it anyway). */
  tmpfsPerms: boolean;
  /** Host directory of the image copied into the repository directory at start (read-only inside), or null. */
  imageSource: string | null;
  /** Where the repository tmpfs is mounted and the server starts. @defaultValue /testbed */
  repoDir?: string;
  /** Command run inside the jail (jail paths). */
  command: string[];
}

function tmpfs(dest: string, bytes: number | undefined, perms?: string): string[] {
  return [
    ...(bytes === undefined ? [] : ['--size', String(bytes)]),
    ...(perms === undefined ? [] : ['--perms', perms]),
    '--tmpfs',
    dest,
  ];
}

export function bwrapArgs(options: BwrapArgsOptions): string[] {
  const { layout, tmpfsBytes } = options;
  const repoDir = options.repoDir ?? JAIL.testbed;
  const args = [...namespaceArgs(options.network), ...systemBindArgs({ network: options.network, etcDir: layout.etc })];
  args.push(
    ...tmpfs(repoDir, tmpfsBytes),
    ...tmpfs(JAIL.tmp, tmpfsBytes, options.tmpfsPerms ? '1777' : undefined),
    ...tmpfs(JAIL.home, tmpfsBytes),
    // No host directory is writable inside: the server's socket is bound outside and inherited (launch-sandbox.ts).
    '--ro-bind',
    RUNTIME_DIR,
    JAIL.runtime,
  );
  if (options.imageSource !== null) args.push('--ro-bind', options.imageSource, JAIL.image);
  args.push(
    // Everything else (the jail's own root tmpfs: /, /opt, /run) is read-only.
    '--remount-ro',
    '/',
    '--hostname',
    options.hostname,
    '--chdir',
    repoDir,
    '--clearenv',
  );
  for (const [key, value] of Object.entries(options.env)) args.push('--setenv', key, value);
  args.push('--', ...options.command);
  return args;
}
