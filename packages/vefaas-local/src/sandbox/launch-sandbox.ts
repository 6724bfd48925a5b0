/**
 * Starts one sandbox: a private state directory seeded from the image template, cgroups for its limits, and
 * the SWE-ReX server (runtime/swerex_server.py) under bubblewrap listening on `<state>/run/swerex.sock`.
 *
 * Process tree: [/bin/sh joins the cgroups, then execs] bwrap → bwrap's pid-1 reaper → python server →
 * bash sessions / commands. Killing bwrap kills its pid-1 (die-with-parent), and the kernel then kills every
 * process in the pid namespace; kill() additionally SIGKILLs every cgroup member and waits for them.
 */
import { spawn } from 'node:child_process';
import { execFile } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RolloutError, abortableDelay } from '@rollout-fleet/shared';
import { parseAuthToken } from './auth-token.js';
import { bwrapArgs } from './bwrap-args.js';
import { bwrapPath, checkIsolation } from './check-isolation.js';
import { buildImage } from './image-build.js';
import { createSandboxCgroups } from './cgroups/sandbox-cgroups.js';
import { IMAGE_MANIFEST, readImageManifest, type ImageManifest } from './image-manifest.js';
import { readImportedImage, type ImportedImage } from '../images/imported-image.js';
import {
  OVERLAY_SCRIPT,
  checkImageShell,
  imageBwrapArgs,
  imageEnv,
  imageStartError,
  infraInterpreter,
  overlayPermitted,
  resolveImageUser,
  resolveInImage,
  type WritableLayer,
} from './image-root.js';
import type { SandboxCgroups } from './cgroups/types.js';
import {
  DEFAULT_PATH,
  JAIL,
  MAX_SOCKET_PATH_BYTES,
  RUNTIME_DIR,
  SERVER_SCRIPT,
  stateLayout,
  type StateLayout,
} from './jail-layout.js';
import { isAlive, killPids, processTree } from './process-tree.js';
import type { EnforcedLimits, IsolationReport, SandboxExit, SandboxLaunch, SandboxProcess } from './types.js';

const execFileAsync = promisify(execFile);
const SECOND = 1000;
const DEFAULT_MAX_PROCESSES = 1024;
const DEFAULT_DISK_MB = 4096;
const MB = 1024 * 1024;
const KILL_WAIT_MS = 10 * SECOND;
const SANDBOX_ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** Joins the cgroups given as the first `$1` arguments, then execs the rest. */
const JOIN_CGROUPS_SCRIPT =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 126; shift; n=$((n-1)); done; exec "$@"';
/**
 * Inside the jail: fills the repository tmpfs ($1: /testbed, or the image's repo_dir) from the read-only image —
 * without the image's manifest, which is not part of the repository — then execs the server (exit 125: copy failed).
 */
/** Inside the jail, before the server: writes the image's /root/.bashrc ($1). */
const WRITE_BASHRC_SCRIPT = `printf '%s' "$1" > ${JAIL.home}/.bashrc || exit 125; shift; exec "$@"`;
const FILL_REPO_SCRIPT = `cp -a --no-preserve=ownership ${JAIL.image}/. "$1"/ || exit 125; rm -f "$1/${IMAGE_MANIFEST}"; shift; exec "$@"`;
/**
 * Outside the jail, before bubblewrap: binds and listens on the host socket path ($1), hands the listening socket
 * on as fd 3, and execs the $2 words that follow (a prefix ending in bubblewrap: bwrap alone, or an image's
 * `unshare ... sh -c <mount overlay> ... bwrap`, which keep fds 3 and 4 across their execs) with bubblewrap's
 * options (after the prefix, up to `--`) on a pipe (`--args 4`). So the server inside
 * serves that fd (`--socket-fd 3`) and the socket directory is never mounted into the jail: a sandbox has no
 * host-backed writable directory at all (no file, and no unlinked-but-open file, it writes reaches the host's
 * disk). And bubblewrap's own argv — which its pid-1 reaper inside the jail keeps, readable in /proc/1/cmdline —
 * names no host path.
 */
const BIND_SOCKET_PY = [
  'import os, socket, sys',
  's = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)',
  's.bind(sys.argv[1])',
  'os.chmod(sys.argv[1], 0o600)',
  's.listen(128)',
  // dup2 onto itself (the socket is fd 3 already) keeps close-on-exec: make fd 3 inheritable either way.
  'if s.fileno() != 3: os.dup2(s.fileno(), 3)',
  'os.set_inheritable(3, True)',
  // The options (host paths among them) go on the pipe; `--` and the jail-side command stay on the argv.
  'n = int(sys.argv[2])',
  'prefix = sys.argv[3 : 3 + n]',
  "end = sys.argv.index('--', 3 + n)",
  "args = b''.join(a.encode() + b'\\0' for a in sys.argv[3 + n : end])",
  'r, w = os.pipe()',
  'os.write(w, args)',
  'os.close(w)',
  'os.dup2(r, 4)',
  'os.set_inheritable(4, True)',
  "os.execvp(prefix[0], prefix + ['--args', '4'] + sys.argv[end:])",
].join('\n');
/** bubblewrap's arguments must fit a pipe's buffer (written before bubblewrap runs). */
const MAX_BWRAP_ARGS_BYTES = 60 * 1024;
/** The jailed server's listening socket (BIND_SOCKET_PY) and its token pipe (the process's stdin). */
const SOCKET_FD = 3;
const TOKEN_FD = 0;

export async function launchSandbox(launch: SandboxLaunch): Promise<SandboxProcess> {
  if (!SANDBOX_ID.test(launch.sandboxId) || launch.sandboxId === '.' || launch.sandboxId === '..') {
    throw new RolloutError(
      'INPUT_INVALID',
      `sandbox id ${JSON.stringify(launch.sandboxId)} is not a safe directory name`,
    );
  }
  const layout = stateLayout(launch.stateRoot, launch.sandboxId);
  if (Buffer.byteLength(layout.socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new RolloutError(
      'CONFIG_INVALID',
      `socket path ${layout.socketPath} exceeds ${MAX_SOCKET_PATH_BYTES} bytes; use a shorter state root`,
    );
  }
  const jailed = launch.isolation === 'bwrap';
  // An imported container image (its own root file system) rather than a directory of repository files.
  const imported = launch.imageDir === null ? null : readImportedImage(launch.imageDir);
  if (imported !== null && !jailed)
    throw imageStartError(imported, 'an imported image runs only with isolation bwrap (its root file system is /)');
  // Read before anything is created: a bad manifest fails the start with nothing to clean up.
  const manifest: ImageManifest =
    launch.imageDir === null || imported !== null ? { repoDir: JAIL.testbed } : readImageManifest(launch.imageDir);
  const imagePlan = imported === null ? undefined : planImageSandbox(imported, launch);
  const repoDir = manifest.repoDir;
  const imageSource = await prepareStateDir(layout, launch, jailed, imported !== null);

  const authToken = manifest.authToken ?? parseAuthToken(launch.command);
  const cgroups = await createSandboxCgroups(
    {
      sandboxId: launch.sandboxId,
      memoryMB: launch.memoryMB,
      cpuMilli: launch.cpuMilli,
      maxProcesses: launch.maxProcesses ?? DEFAULT_MAX_PROCESSES,
    },
    launch.cgroup,
  );
  const jailFeatures = jailed ? checkIsolation() : undefined;
  const via = cgroups === null ? undefined : (`cgroup-${cgroups.version}` as const);
  const limits: EnforcedLimits = {
    memory: cgroups?.memory === true && via !== undefined ? via : 'rlimit-as',
    processes: cgroups?.pids === true && via !== undefined ? via : 'none',
    cpu: cgroups?.cpu === true && via !== undefined ? via : 'none',
    disk: !jailed
      ? 'none'
      : imagePlan?.layer === 'overlay' || jailFeatures?.tmpfsSize === true
        ? 'tmpfs-size'
        : cgroups?.memory === true
          ? 'memory'
          : 'none',
  };
  if (!jailed && manifest.bashrc !== undefined) await writeFile(join(layout.home, '.bashrc'), manifest.bashrc);
  const argv = buildArgv({
    launch,
    layout,
    limits,
    cgroups,
    imageSource,
    jailFeatures,
    repoDir,
    ...(manifest.bashrc === undefined ? {} : { bashrc: manifest.bashrc }),
    ...(imagePlan === undefined ? {} : { imagePlan }),
  });

  const logFd = openSync(layout.logPath, 'a');
  let child;
  try {
    // The token travels on a pipe (the server reads it to EOF at start), never on an argv or in an environment.
    child = spawn(argv[0] as string, argv.slice(1), {
      stdio: ['pipe', logFd, logFd],
      detached: true,
      env: { PATH: DEFAULT_PATH },
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(authToken);
  } finally {
    closeSync(logFd);
  }
  const exited = new Promise<SandboxExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) =>
      reject(
        new RolloutError('SANDBOX_START_FAILED', `could not start sandbox ${launch.sandboxId}: ${err.message}`, {
          cause: err,
        }),
      ),
    );
  }).catch(async (err: unknown) => {
    await cgroups?.remove();
    await rm(layout.stateDir, { recursive: true, force: true });
    throw err;
  });
  const pid = child.pid as number;

  const listPids = async (): Promise<number[]> => {
    const pids = new Set(await processTree(pid));
    for (const member of (await cgroups?.members()) ?? []) if (await isAlive(member)) pids.add(member);
    return [...pids];
  };
  let killing: Promise<void> | null = null;
  const kill = (): Promise<void> => {
    killing ??= (async () => {
      const before = await listPids();
      const inner = before.filter((p) => p !== pid);
      if (launch.isolation === 'bwrap' && inner.length > 0) {
        // Kill the jail's processes, not bwrap itself: the namespace's init then reaps everything inside and
        // bwrap reaps the init and exits. Killing bwrap first would orphan the init's zombie to the host's
        // pid 1, which may take seconds to reap it.
        killPids(inner);
        await Promise.race([exited, abortableDelay(2 * SECOND)]);
      }
      killPids([pid, ...inner]);
      await exited;
      await waitUntilGone(async () => [...inner, ...((await cgroups?.members()) ?? [])]);
      await cgroups?.remove();
      await rm(layout.stateDir, { recursive: true, force: true });
    })();
    return killing;
  };

  return {
    sandboxId: launch.sandboxId,
    socketPath: layout.socketPath,
    authToken,
    pid,
    stateDir: layout.stateDir,
    logPath: layout.logPath,
    limits,
    exited,
    listPids,
    kill,
  };
}

/**
 * Creates the state directory. With the jail: the socket directory and the generated /etc files, and returns the
 * image directory to bind (the jail copies it into its /testbed tmpfs). Without: host /testbed, /tmp and /root,
 * the image copied into /testbed here.
 */
async function prepareStateDir(
  layout: StateLayout,
  launch: SandboxLaunch,
  jailed: boolean,
  imported: boolean,
): Promise<string | null> {
  await mkdir(layout.stateDir, { recursive: false, mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return mkdir(layout.stateDir, { recursive: true, mode: 0o700 });
    // EEXIST: a live sandbox with this id, or leftovers of a dead host (see removeSandboxLeftovers).
    throw new RolloutError('SANDBOX_START_FAILED', `state directory ${layout.stateDir} already exists`, { cause: err });
  });
  await mkdir(layout.run, { recursive: true, mode: 0o755 });
  if (jailed) {
    await writeJailEtc(layout.etc, launch.sandboxId.slice(0, 63));
  } else {
    for (const dir of [layout.testbed, layout.home]) await mkdir(dir, { recursive: true, mode: 0o755 });
    await mkdir(layout.tmp, { recursive: true });
    await chmod(layout.tmp, 0o1777);
  }
  if (imported) {
    // Mount points of the image tree, the writable layer and the merged root; all stay empty on the host's disk.
    await mkdir(join(layout.stateDir, 'lower'));
    await mkdir(join(layout.stateDir, 'layer'));
    await mkdir(join(layout.stateDir, 'merged'));
    return null;
  }
  if (launch.imageDir === null) return null;
  try {
    const source = await buildImage(launch.imageDir, join(layout.stateDir, '..', '.images'));
    if (jailed) return source;
    // cp keeps .git, symlinks and modes; ownership becomes the host user.
    await execFileAsync('cp', ['-a', '--no-preserve=ownership', '--reflink=auto', `${source}/.`, layout.testbed]);
    // A template used as it is (it has .git) still keeps its manifest out of the repository.
    await rm(join(layout.testbed, IMAGE_MANIFEST), { force: true });
    return null;
  } catch (err) {
    await rm(layout.stateDir, { recursive: true, force: true });
    throw new RolloutError('SANDBOX_START_FAILED', `could not copy image template ${launch.imageDir}`, {
      cause: err,
      details: { errorCode: 'function_initialize_failed' },
    });
  }
}

/** passwd, group and hosts for the jail: its own user and name, none of the host's accounts or host names. */
async function writeJailEtc(dir: string, hostname: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  // bwrap keeps this process's uid inside the jail; give it a name and the jail's HOME.
  const own = uid === 0 ? [] : [`sandbox:x:${uid}:${gid}:sandbox:${JAIL.home}:/bin/bash`];
  const ownGroup = gid === 0 ? [] : [`sandbox:x:${gid}:`];
  await writeFile(
    join(dir, 'passwd'),
    [
      `root:x:0:0:root:${JAIL.home}:/bin/bash`,
      ...own,
      'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'group'), ['root:x:0:', ...ownGroup, 'nogroup:x:65534:', ''].join('\n'));
  await writeFile(
    join(dir, 'hosts'),
    ['127.0.0.1\tlocalhost', `127.0.1.1\t${hostname}`, '::1\tlocalhost ip6-localhost ip6-loopback', ''].join('\n'),
  );
}

interface ArgvInput {
  launch: SandboxLaunch;
  layout: StateLayout;
  limits: EnforcedLimits;
  cgroups: SandboxCgroups | null;
  imageSource: string | null;
  jailFeatures: IsolationReport | undefined;
  /** Where the repository is mounted and the server starts (/testbed unless the image's manifest says). */
  repoDir: string;
  /** The image's /root/.bashrc, from its manifest. */
  bashrc?: string;
  /** An imported image's sandbox (image-root.ts). */
  imagePlan?: ImagePlan;
}

interface ImagePlan {
  image: ImportedImage;
  layer: WritableLayer;
  env: Record<string, string>;
  user: ReturnType<typeof resolveImageUser>;
  cwd: string;
  copyUp: string[];
}

/** Env, User, WorkingDir as a container runtime applies them; fails (function_initialize_failed) without bash. */
function planImageSandbox(image: ImportedImage, launch: SandboxLaunch): ImagePlan {
  const user = resolveImageUser(image);
  const env: Record<string, string> = { ...imageEnv(image) };
  env.HOME ??= user.home;
  Object.assign(env, launch.envs, { TERM: 'dumb' });
  checkImageShell(image, env.PATH ?? DEFAULT_PATH);
  const cwd = image.workingDir === '' ? '/' : image.workingDir;
  const layer: WritableLayer = launch.imageLayer ?? (overlayPermitted() ? 'overlay' : 'copy-up');
  // Without overlay, the places a sandbox writes to are copied up: HOME, the repository, the working directory.
  const copyUp = [user.home, JAIL.testbed, cwd]
    .filter((dir, i, all) => dir !== '/' && all.indexOf(dir) === i && dir !== '/tmp')
    .filter((dir) => resolveInImage(image.rootfs, dir) === dir);
  return { image, layer, env, user, cwd, copyUp };
}

function buildArgv(input: ArgvInput): string[] {
  const { launch, layout, limits, cgroups, imageSource, repoDir } = input;
  const python = launch.pythonPath ?? '/usr/bin/python3';
  const jailed = launch.isolation === 'bwrap';
  const env: Record<string, string> = { PATH: DEFAULT_PATH, HOME: JAIL.home, ...launch.envs, TERM: 'dumb' };
  // Without a jail, "/root" would be the host's home (and its .bashrc): point it at the private one instead,
  // and give the sandbox its own temporary directory (the host's /tmp is shared by every sandbox).
  if (!jailed && env.HOME === JAIL.home) env.HOME = layout.home;
  if (!jailed) env.TMPDIR = layout.tmp;
  // -E: ignore PYTHON* from the sandbox Envs; -s: no user site; -B: no .pyc next to the read-only runtime.
  const serverArgs = ['-E', '-s', '-B'];
  let command: string[];
  const plan = input.imagePlan;
  if (plan !== undefined) {
    const diskBytes = (launch.diskMB ?? DEFAULT_DISK_MB) * MB;
    const bwrapOptions = imageBwrapArgs({
      image: plan.image,
      layer: plan.layer,
      merged: join(layout.stateDir, 'merged'),
      hostsFile: join(layout.etc, 'hosts'),
      network: launch.network,
      hostname: launch.sandboxId.slice(0, 63),
      user: plan.user,
      cwd: plan.cwd,
      env: plan.env,
      interpreter: infraInterpreter(python),
      tmpfsBytes: input.jailFeatures?.tmpfsSize === true ? diskBytes : undefined,
      copyUp: plan.copyUp,
      socketFd: SOCKET_FD,
      authTokenFd: TOKEN_FD,
    });
    const prefix =
      plan.layer === 'overlay'
        ? [
            'unshare',
            '--user',
            '--map-root-user',
            '--mount',
            '--propagation',
            'private',
            '/bin/sh',
            '-c',
            OVERLAY_SCRIPT,
            'sh',
            plan.image.rootfs,
            layout.stateDir,
            String(diskBytes),
            bwrapPath() ?? 'bwrap',
          ]
        : [bwrapPath() ?? 'bwrap'];
    command = bindSocketCommand(python, layout, prefix, bwrapOptions);
  } else if (jailed) {
    command = [
      python,
      ...serverArgs,
      join(JAIL.runtime, SERVER_SCRIPT),
      '--socket-fd',
      String(SOCKET_FD),
      '--auth-token-fd',
      String(TOKEN_FD),
    ];
    if (input.bashrc !== undefined) command = ['/bin/sh', '-c', WRITE_BASHRC_SCRIPT, 'sh', input.bashrc, ...command];
    if (imageSource !== null) command = ['/bin/sh', '-c', FILL_REPO_SCRIPT, 'sh', repoDir, ...command];
    command = bindSocketCommand(
      python,
      layout,
      [bwrapPath() ?? 'bwrap'],
      bwrapArgs({
        layout,
        network: launch.network,
        env,
        hostname: launch.sandboxId.slice(0, 63),
        tmpfsBytes: input.jailFeatures?.tmpfsSize === true ? (launch.diskMB ?? DEFAULT_DISK_MB) * MB : undefined,
        tmpfsPerms: input.jailFeatures?.tmpfsPerms === true,
        imageSource,
        repoDir,
        command,
      }),
    );
  } else {
    // No mount namespace: the server maps the repository (/testbed, or the image's repo_dir), /root and /tmp to
    // this sandbox's directories at its edge, so episodes written for a jailed sandbox (SWE-bench images) find
    // their paths and do not share /tmp.
    const pairs = [
      [repoDir, layout.testbed],
      [JAIL.home, layout.home],
      [JAIL.tmp, layout.tmp],
    ];
    const aliases = pairs.flatMap(([alias, real]) => ['--path-alias', `${alias}=${real}`]);
    command = [
      '/usr/bin/env',
      '-i',
      ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      python,
      ...serverArgs,
      join(RUNTIME_DIR, SERVER_SCRIPT),
      '--socket',
      layout.socketPath,
      '--auth-token-fd',
      String(TOKEN_FD),
      '--die-with-parent',
      '--cwd',
      layout.testbed,
      ...aliases,
    ];
  }
  if (limits.memory === 'rlimit-as') command = ['prlimit', `--as=${launch.memoryMB * MB}`, '--', ...command];
  if (cgroups !== null && cgroups.procsFiles.length > 0)
    command = [
      '/bin/sh',
      '-c',
      JOIN_CGROUPS_SCRIPT,
      'sh',
      String(cgroups.procsFiles.length),
      ...cgroups.procsFiles,
      ...command,
    ];
  return command;
}

/** BIND_SOCKET_PY before `prefix` (ending in bwrap) and bwrap's `options` (its argv after `bwrap`, `-- cmd` last). */
function bindSocketCommand(python: string, layout: StateLayout, prefix: string[], options: string[]): string[] {
  const end = options.indexOf('--');
  const argsBytes = options.slice(0, end).reduce((n, a) => n + Buffer.byteLength(a) + 1, 0);
  if (argsBytes > MAX_BWRAP_ARGS_BYTES)
    throw new RolloutError('SANDBOX_START_FAILED', `bubblewrap arguments of ${argsBytes} bytes do not fit a pipe`);
  return [python, '-I', '-S', '-c', BIND_SOCKET_PY, layout.socketPath, String(prefix.length), ...prefix, ...options];
}

async function waitUntilGone(list: () => Promise<number[]>): Promise<void> {
  const deadline = Date.now() + KILL_WAIT_MS;
  for (;;) {
    const alive: number[] = [];
    for (const pid of await list()) if (await isAlive(pid)) alive.push(pid);
    if (alive.length === 0) return;
    if (Date.now() > deadline)
      throw new RolloutError('INTERNAL', `sandbox processes survived SIGKILL: ${alive.join(',')}`);
    killPids(alive);
    await abortableDelay(20);
  }
}
