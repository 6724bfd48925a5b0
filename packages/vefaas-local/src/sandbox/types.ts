/** Public shapes of the per-sandbox runtime: one SWE-ReX server process tree per sandbox. */
import type { CgroupOptions } from './cgroups/sandbox-cgroups.js';

export type Isolation = 'bwrap' | 'none';

export interface SandboxLaunch {
  /** Becomes the state directory name and the cgroup name: letters, digits, `_`, `.`, `-` only. */
  sandboxId: string;
  /** InstanceImageInfo.Command; only its auth token is used (see parseAuthToken). */
  command: string;
  /** Template directory copied to /testbed (see resolveImage); null = empty /testbed. */
  imageDir: string | null;
  /** Sandbox Envs; they override the defaults (PATH, HOME=/root) except TERM, which stays `dumb`. */
  envs: Record<string, string>;
  /** Memory limit of the whole process tree (cgroup v2 or v1 memory controller; fallback RLIMIT_AS per process). */
  memoryMB: number;
  /** CPU quota in thousandths of a core (cgroup cpu controller); not enforced without it. */
  cpuMilli: number;
  /** Share the host network namespace; false = loopback only. */
  network: boolean;
  /** 'bwrap' = bubblewrap jail; 'none' = run the server directly on the host (no isolation at all). */
  isolation: Isolation;
  /** Parent of the per-sandbox state directory `<stateRoot>/<sandboxId>`. Keep it short: the socket path must fit 107 bytes. */
  stateRoot: string;
  /**
   * Maximum number of processes (threads count) in the sandbox (cgroup pids controller).
   * @defaultValue 1024
   */
  maxProcesses?: number;
  /**
   * Host Python used to run the server; must live under /usr so it is visible in the jail.
   * @defaultValue '/usr/bin/python3'
   */
  pythonPath?: string;
  /**
   * Size of each writable directory of the jail (/testbed, /tmp, /root are tmpfs mounts of this size; writing
   * more fails with ENOSPC). tmpfs pages count against the memory limit too. @defaultValue 4096
   */
  diskMB?: number;
  /**
   * Writable layer of an imported image's sandbox: overlayfs in a user namespace, or tmpfs copies of the
   * writable directories. @defaultValue overlay where this host permits it, else copy-up
   */
  imageLayer?: 'overlay' | 'copy-up';
  /** Where cgroups live and, for cgroup v2, a delegated parent. @defaultValue detected (see sandbox-cgroups.ts) */
  cgroup?: CgroupOptions;
}

/** How each limit is enforced for one sandbox (what the host could set up here). */
export interface EnforcedLimits {
  /** RLIMIT_AS (per process, no cgroup) is the weak fallback: it does not bound a tree of processes. */
  memory: 'cgroup-v1' | 'cgroup-v2' | 'rlimit-as' | 'none';
  processes: 'cgroup-v1' | 'cgroup-v2' | 'none';
  cpu: 'cgroup-v1' | 'cgroup-v2' | 'none';
  /**
   * Writable space: `tmpfs-size` = sized tmpfs mounts (ENOSPC at diskMB); `memory` = unsized tmpfs, bounded only
   * by the memory cgroup that charges its pages; `none` = the host's disk (isolation 'none').
   */
  disk: 'tmpfs-size' | 'memory' | 'none';
}

export interface SandboxExit {
  code: number | null;
  signal: string | null;
}

export interface SandboxProcess {
  readonly sandboxId: string;
  /** Host path of the server's UNIX socket (undici `socketPath`). */
  readonly socketPath: string;
  /** The server's X-API-Key ('' = auth disabled). */
  readonly authToken: string;
  /** Host pid of the outermost process (bwrap, or the server with isolation 'none'). */
  readonly pid: number;
  /** `<stateRoot>/<sandboxId>`; removed by kill(). */
  readonly stateDir: string;
  /** Server stdout/stderr (outside the jail); removed by kill(). */
  readonly logPath: string;
  readonly limits: EnforcedLimits;
  /** Resolves when the outermost process exits, whoever ended it. */
  readonly exited: Promise<SandboxExit>;
  /** Host pids of every live process of the sandbox (cgroup membership, else the process tree). */
  listPids(): Promise<number[]>;
  /** Kills every process of the sandbox, waits for them, removes the state dir and cgroups. Idempotent. */
  kill(): Promise<void>;
}

export interface IsolationReport {
  /** True when a bubblewrap jail with the sandbox recipe can be started here. */
  bwrap: boolean;
  /** bwrap knows `--size` (sized tmpfs, bubblewrap ≥ 0.7) and `--perms`. */
  tmpfsSize?: boolean;
  tmpfsPerms?: boolean;
  /** `bubblewrap 0.8.0` style version string when the binary runs. */
  version?: string;
  /** Why bwrap is unusable. */
  reason?: string;
}
