/**
 * A sandbox of an imported image (images/imported-image.ts): `/` is the image's root file system, shared read-only
 * by every sandbox of that image, under a private writable layer:
 * - `overlay`: `unshare` (user + mount namespace) mounts a tmpfs of the disk limit's size and an overlayfs of the
 *   shared tree with its upper layer there, then execs bwrap with that as `/`. bubblewrap 0.8 has no `--overlay`.
 * - `copy-up` (where the kernel does not let a user namespace mount overlayfs): the image's top-level entries are
 *   bound read-only, and /tmp, HOME, the repository and the working directory are tmpfs mounts of that size,
 *   filled from the image at start.
 * The SWE-ReX server is infrastructure: the host's interpreter and libraries are bound read-only under
 * `/.vefaas-local/` and started through the host's dynamic loader, so it depends on nothing in the image and is on
 * none of its paths. Sessions, tools and tests then run the image's own bash and python3, with the image's Env.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { RolloutError } from '@rollout-fleet/shared';
import type { ImportedImage } from '../images/imported-image.js';
import { DEFAULT_PATH, RUNTIME_DIR, SERVER_SCRIPT } from './jail-layout.js';

/** The private mount of the infrastructure inside an image sandbox. */
export const INFRA = {
  root: '/.vefaas-local',
  runtime: '/.vefaas-local/runtime',
  image: '/.vefaas-local/image',
} as const;

export type WritableLayer = 'overlay' | 'copy-up';

/**
 * Inside `unshare`: $1 shared tree, $2 state dir, $3 tmpfs bytes, then the command. Exit 124: no overlay here
 * (the probe said otherwise; the sandbox fails rather than silently running without its writable layer).
 */
export const OVERLAY_SCRIPT = [
  'set -e',
  'lower=$1; st=$2; size=$3; shift 3',
  'mount -t tmpfs -o "size=$size,mode=0755" tmpfs "$st/layer"',
  'mkdir -p "$st/layer/upper" "$st/layer/work"',
  // Relative layer paths (the tree bound at $st/lower first): the overlay's options, which the jail reads in its
  // /proc/self/mountinfo, then name no host path.
  'mount --bind "$lower" "$st/lower"',
  // A subshell: the cd leaves no PWD/OLDPWD naming the state dir in bwrap's environment.
  'o="lowerdir=lower,upperdir=layer/upper,workdir=layer/work"',
  '(cd "$st" && { mount -t overlay overlay -o "$o,userxattr" merged 2>/dev/null || mount -t overlay overlay -o "$o" merged; }) || exit 124',
  // bwrap would create its mount point 0700: the image's user must be able to traverse it.
  `mkdir -p -m 0755 "$st/merged${INFRA.root}"`,
  'exec "$@"',
].join('\n');

let overlayVerdict: boolean | undefined;

/** Whether a user namespace may mount overlayfs over a tmpfs here (tried once per process). */
export function overlayPermitted(): boolean {
  if (overlayVerdict !== undefined) return overlayVerdict;
  const dir = mkdtempSync(join(tmpdir(), 'vefaas-overlay-probe-'));
  try {
    for (const sub of ['lower', 'layer', 'merged']) execFileSync('mkdir', ['-p', join(dir, sub)]);
    execFileSync(
      'unshare',
      [
        '--user',
        '--map-root-user',
        '--mount',
        '--propagation',
        'private',
        '/bin/sh',
        '-c',
        OVERLAY_SCRIPT,
        'sh',
        join(dir, 'lower'),
        dir,
        String(1024 * 1024),
        'true',
      ],
      { stdio: 'ignore', timeout: 10_000 },
    );
    overlayVerdict = true;
  } catch {
    overlayVerdict = false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return overlayVerdict;
}

/** How the host's interpreter is started inside the image: its loader, library path and binary, all under INFRA. */
export interface InfraInterpreter {
  /** Host paths to bind read-only at INFRA.root + path. */
  binds: string[];
  argv: string[];
}

export function infraInterpreter(pythonPath: string): InfraInterpreter {
  const python = realpathSync(pythonPath);
  const loaderHost = hostLoader();
  const libDirs = [dirname(loaderHost), ...['/usr/lib', '/lib', '/usr/lib64', '/lib64'].map(realOrNull)].filter(
    (d, i, all): d is string => d !== null && all.indexOf(d) === i && existsSync(d),
  );
  const triplet = /\/([a-z0-9_]+-linux-gnu[a-z0-9]*)$/.exec(dirname(loaderHost))?.[1];
  if (triplet !== undefined)
    for (const d of [`/usr/lib/${triplet}`, `/lib/${triplet}`].map(realOrNull))
      if (d !== null && existsSync(d) && !libDirs.includes(d)) libDirs.push(d);
  // Every host directory the interpreter reaches: /usr, and /lib* where they are not symlinks into /usr.
  const binds = ['/usr'];
  for (const top of ['/lib', '/lib64', '/lib32', '/libx32']) {
    try {
      if (lstatSync(top).isDirectory()) binds.push(top);
    } catch {
      // not on this host
    }
  }
  const inside = (p: string): string => INFRA.root + p;
  return {
    binds,
    argv: [inside(loaderHost), '--library-path', libDirs.map(inside).join(':'), inside(python)],
  };
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

function hostLoader(): string {
  const candidates = ['/lib64/ld-linux-x86-64.so.2', '/lib/ld-linux-aarch64.so.1', '/lib/ld-linux-armhf.so.3'];
  for (const candidate of candidates) {
    const real = realOrNull(candidate);
    if (real !== null) return real;
  }
  throw new RolloutError('SANDBOX_START_FAILED', 'no dynamic loader found on this host for the SWE-ReX runtime');
}

/**
 * Resolves `path` inside the image as the kernel would with the image as `/` (absolute symlinks stay in the
 * image); null when it does not exist.
 */
export function resolveInImage(rootfs: string, path: string, depth = 0): string | null {
  if (depth > 40) return null;
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  let current = '/';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const next = part === '..' ? posix.dirname(current) : posix.join(current, part);
    let info;
    try {
      info = lstatSync(join(rootfs, next));
    } catch {
      return null;
    }
    if (info.isSymbolicLink()) {
      const target = readlinkSync(join(rootfs, next));
      const base = target.startsWith('/') ? target : posix.join(current, target);
      const resolved = resolveInImage(rootfs, base, depth + 1);
      if (resolved === null) return null;
      current = resolved;
    } else {
      current = next;
    }
  }
  return current;
}

/** First `name` on `PATH` inside the image that is an executable file. */
export function whichInImage(rootfs: string, path: string, name: string): string | null {
  for (const dir of path.split(':')) {
    if (!dir.startsWith('/')) continue;
    const resolved = resolveInImage(rootfs, posix.join(dir, name));
    if (resolved === null) continue;
    try {
      const info = lstatSync(join(rootfs, resolved));
      if (info.isFile() && (info.mode & 0o111) !== 0) return posix.join(dir, name);
    } catch {
      // vanished
    }
  }
  return null;
}

export interface ImageUser {
  uid: number;
  gid: number;
  home: string;
}

/** The config's `User` as a container runtime reads it: numbers, or names from the image's passwd and group. */
export function resolveImageUser(image: ImportedImage): ImageUser {
  const spec = image.user.trim();
  const passwd = readImageFile(image.rootfs, '/etc/passwd')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((f) => f.length >= 7);
  const groups = readImageFile(image.rootfs, '/etc/group')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((f) => f.length >= 3);
  const [userPart = '', groupPart] = spec === '' ? ['0'] : spec.split(':');
  const byName = passwd.find((f) => f[0] === userPart);
  const byUid = passwd.find((f) => f[2] === userPart);
  let uid: number;
  let entry: string[] | undefined;
  if (/^\d+$/.test(userPart)) {
    uid = Number(userPart);
    entry = byUid;
  } else if (byName !== undefined) {
    uid = Number(byName[2]);
    entry = byName;
  } else {
    throw imageStartError(image, `its User ${JSON.stringify(spec)} is not in the image's /etc/passwd`);
  }
  let gid = entry === undefined ? uid : Number(entry[3]);
  if (groupPart !== undefined) {
    if (/^\d+$/.test(groupPart)) gid = Number(groupPart);
    else {
      const group = groups.find((f) => f[0] === groupPart);
      if (group === undefined)
        throw imageStartError(image, `its User's group ${JSON.stringify(groupPart)} is not in the image's /etc/group`);
      gid = Number(group[2]);
    }
  }
  const home = entry?.[5] || (uid === 0 ? '/root' : '/');
  return { uid, gid, home };
}

function readImageFile(rootfs: string, path: string): string {
  const resolved = resolveInImage(rootfs, path);
  if (resolved === null) return '';
  try {
    return readFileSync(join(rootfs, resolved), 'utf8');
  } catch {
    return '';
  }
}

/** The image's Env as a map (later entries win, as a runtime sets them in order), PATH defaulted as runtimes do. */
export function imageEnv(image: ImportedImage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of image.env) {
    const at = entry.indexOf('=');
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  env.PATH ??= DEFAULT_PATH;
  return env;
}

/** What the SWE-ReX sessions need from the image: a bash on its PATH and /usr/bin/env (the server runs `env bash`). */
export function checkImageShell(image: ImportedImage, path: string): void {
  if (whichInImage(image.rootfs, path, 'bash') === null)
    throw imageStartError(image, `it has no bash on its PATH (${path}); SWE-ReX sessions run bash`);
  if (whichInImage(image.rootfs, '/usr/bin', 'env') === null)
    throw imageStartError(image, 'it has no /usr/bin/env; SWE-ReX starts its sessions with `/usr/bin/env bash`');
}

export function imageStartError(image: ImportedImage, why: string): RolloutError {
  return new RolloutError(
    'SANDBOX_START_FAILED',
    `image ${image.source || image.digest} cannot run a sandbox: ${why}`,
    {
      details: { errorCode: 'function_initialize_failed', digest: image.digest },
    },
  );
}

export interface ImageBwrapOptions {
  image: ImportedImage;
  layer: WritableLayer;
  /** `<state>/merged` (overlay) — the root bwrap binds. */
  merged: string;
  /** Host file bound at /etc/hosts. */
  hostsFile: string;
  network: boolean;
  hostname: string;
  user: ImageUser;
  cwd: string;
  env: Record<string, string>;
  interpreter: InfraInterpreter;
  /** copy-up: bytes of each writable tmpfs (undefined = unsized). */
  tmpfsBytes: number | undefined;
  /** copy-up: image directories made writable (tmpfs filled from the image). */
  copyUp: string[];
  /** The server serves this inherited listening socket (bound outside the jail); no host directory is mounted for it. */
  socketFd: number;
  /** The server reads its token from this inherited fd (a pipe), never from an argv or an environment. */
  authTokenFd: number;
}

/** bwrap's arguments for an image sandbox (the part after `bwrap`). */
export function imageBwrapArgs(o: ImageBwrapOptions): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  if (o.network) args.push('--share-net');
  args.push('--uid', String(o.user.uid), '--gid', String(o.user.gid));
  if (o.layer === 'overlay') {
    args.push('--bind', o.merged, '/');
  } else {
    args.push('--tmpfs', '/');
    for (const entry of topLevel(o.image.rootfs)) {
      if (['proc', 'dev', 'tmp'].includes(entry.name)) continue;
      if (entry.symlink !== undefined) args.push('--symlink', entry.symlink, `/${entry.name}`);
      else args.push('--ro-bind', join(o.image.rootfs, entry.name), `/${entry.name}`);
    }
    const size = o.tmpfsBytes === undefined ? [] : ['--size', String(o.tmpfsBytes)];
    args.push(...size, '--perms', '1777', '--tmpfs', '/tmp');
    for (const dir of o.copyUp) args.push(...size, '--tmpfs', dir);
    args.push('--ro-bind', o.image.rootfs, INFRA.image);
  }
  args.push('--proc', '/proc', '--dev', '/dev');
  if (o.layer === 'overlay' && resolveInImage(o.image.rootfs, '/tmp') === null)
    args.push('--perms', '1777', '--dir', '/tmp');
  for (const bind of o.interpreter.binds) args.push('--ro-bind', bind, INFRA.root + bind);
  args.push('--ro-bind', RUNTIME_DIR, INFRA.runtime);
  // A read-only image (copy-up) has no room for a mount point it lacks: bind over what is there only.
  const canBind = (path: string): boolean => o.layer === 'overlay' || resolveInImage(o.image.rootfs, path) === path;
  if (canBind('/etc/hosts')) args.push('--ro-bind', o.hostsFile, '/etc/hosts');
  if (o.network && existsSync('/etc/resolv.conf') && canBind('/etc/resolv.conf'))
    args.push('--ro-bind', '/etc/resolv.conf', '/etc/resolv.conf');
  args.push('--hostname', o.hostname, '--chdir', o.cwd, '--clearenv');
  for (const [key, value] of Object.entries(o.env)) args.push('--setenv', key, value);
  // -E: ignore PYTHON* of the image's Env; -s: no user site; -B: no .pyc next to the read-only runtime.
  let command = [
    ...o.interpreter.argv,
    '-E',
    '-s',
    '-B',
    join(INFRA.runtime, SERVER_SCRIPT),
    '--socket-fd',
    String(o.socketFd),
    '--auth-token-fd',
    String(o.authTokenFd),
  ];
  if (o.layer === 'copy-up' && o.copyUp.length > 0) {
    // The image's own sh and cp fill the writable directories (exit 125: the copy failed).
    const fill = `for d in ${o.copyUp.map(shellQuote).join(' ')}; do cp -a ${INFRA.image}"$d"/. "$d"/ || exit 125; done; exec "$@"`;
    command = ['/bin/sh', '-c', fill, 'sh', ...command];
  }
  args.push('--', ...command);
  return args;
}

function topLevel(rootfs: string): Array<{ name: string; symlink?: string }> {
  const out: Array<{ name: string; symlink?: string }> = [];
  for (const name of readdirSync(rootfs).sort()) {
    const info = lstatSync(join(rootfs, name));
    out.push(info.isSymbolicLink() ? { name, symlink: readlinkSync(join(rootfs, name)) } : { name });
  }
  return out;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
