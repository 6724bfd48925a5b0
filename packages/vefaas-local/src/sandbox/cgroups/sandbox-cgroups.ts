/**
 * Which cgroup hierarchy this host has, and the per-sandbox groups on it: v2 (unified) where
 * `<root>/cgroup.controllers` exists, v1 where controllers are mounted one per directory, none otherwise.
 * Detection and the v2 parent search run once per (root, parent) and are shared by every sandbox.
 */
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createV1Groups, v1GroupDirs } from './cgroup-v1.js';
import { createV2Group, findV2Parent, type V2Parent } from './cgroup-v2.js';
import { CONTROLLERS, type CgroupLimits, type SandboxCgroups } from './types.js';

export interface CgroupOptions {
  /** Where cgroupfs is mounted. @defaultValue '/sys/fs/cgroup' */
  root?: string;
  /** cgroup v2: a delegated directory to create sandbox groups in (see cgroup-v2.ts for the search without it). */
  parent?: string;
  /** Contents of /proc/self/cgroup (tests give their own). @defaultValue read from /proc */
  procSelfCgroup?: string;
}

export type CgroupHost =
  | { version: 'v1'; root: string; notes: string[] }
  | { version: 'v2'; root: string; parent: V2Parent | null; notes: string[] }
  | { version: 'none'; root: string; notes: string[] };

const DEFAULT_ROOT = '/sys/fs/cgroup';
const hosts = new Map<string, Promise<CgroupHost>>();

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

async function detect(options: CgroupOptions): Promise<CgroupHost> {
  const root = options.root ?? DEFAULT_ROOT;
  if (await exists(join(root, 'cgroup.controllers'))) {
    const procSelfCgroup = options.procSelfCgroup ?? (await readFile('/proc/self/cgroup', 'utf8').catch(() => ''));
    const search = await findV2Parent({
      root,
      procSelfCgroup,
      hostPid: process.pid,
      ...(options.parent === undefined ? {} : { parent: options.parent }),
    });
    return { version: 'v2', root, parent: search.parent, notes: search.notes };
  }
  const mounted = await Promise.all(CONTROLLERS.map((c) => exists(join(root, c))));
  if (mounted.some(Boolean)) return { version: 'v1', root, notes: [] };
  return { version: 'none', root, notes: [`no cgroup hierarchy at ${root}`] };
}

/** The host's cgroup set-up (memoized: moving this process into a leaf must happen once). */
export function cgroupHost(options: CgroupOptions = {}): Promise<CgroupHost> {
  const key = JSON.stringify([options.root ?? DEFAULT_ROOT, options.parent ?? null]);
  let host = hosts.get(key);
  if (host === undefined) {
    host = detect(options);
    hosts.set(key, host);
  }
  return host;
}

const NO_GROUPS: Omit<SandboxCgroups, 'version'> = {
  memory: false,
  pids: false,
  cpu: false,
  procsFiles: [],
  members: async () => [],
  remove: async () => undefined,
};

export async function createSandboxCgroups(
  limits: CgroupLimits,
  options: CgroupOptions = {},
): Promise<SandboxCgroups | null> {
  const host = await cgroupHost(options);
  if (host.version === 'v1') return createV1Groups(limits, host.root);
  if (host.version === 'v2' && host.parent !== null) return createV2Group(limits, host.parent);
  return host.version === 'none' ? null : { version: host.version, ...NO_GROUPS };
}

/** Group directories a sandbox may have left behind (for the leftovers sweep). */
export async function sandboxCgroupDirs(sandboxId: string, options: CgroupOptions = {}): Promise<string[]> {
  const host = await cgroupHost(options);
  if (host.version === 'v1') return v1GroupDirs(sandboxId, host.root);
  if (host.version === 'v2' && host.parent !== null) return [join(host.parent.dir, sandboxId)];
  return [];
}
