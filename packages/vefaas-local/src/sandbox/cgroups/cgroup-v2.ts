/**
 * cgroup v2 (the unified hierarchy, the only one on current distributions): one group per sandbox,
 * `<parent>/<sandboxId>`, with `memory.max`, `memory.swap.max`, `pids.max` and `cpu.max`.
 *
 * The parent must be a subtree we may write and whose `cgroup.subtree_control` enables the controllers
 * (cgroups(7) "delegation"). Tried in order, first that enables any controller wins:
 * 1. a parent given in the options (an administrator's delegated directory);
 * 2. `<root>/rollout-fleet` (root, or a host whose root cgroup is delegated to us);
 * 3. our own cgroup (a systemd unit with Delegate=yes, a container's private cgroup namespace): v2 forbids
 *    processes in a cgroup that hands controllers to its children, so this process moves into a leaf
 *    `<own>/vefaas-local-host` first, as systemd asks of delegated processes.
 */
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readMembers } from './cgroup-v1.js';
import {
  CONTROLLERS,
  CPU_PERIOD_US,
  GROUP_PARENT,
  cpuQuotaUs,
  type CgroupLimits,
  type Controller,
  type SandboxCgroups,
} from './types.js';

const HOST_LEAF = 'vefaas-local-host';

export interface V2Parent {
  dir: string;
  /** Controllers enabled for the sandbox groups (the parent's `cgroup.subtree_control`). */
  controllers: Controller[];
}

export interface V2ParentSearch {
  parent: V2Parent | null;
  /** Why candidates were passed over, for the start-up report. */
  notes: string[];
}

function tokens(text: string): string[] {
  return text
    .split(/\s+/)
    .filter((t) => t !== '')
    .map((t) => t.replace(/^\+/, ''));
}

async function readTokens(file: string): Promise<string[] | undefined> {
  return readFile(file, 'utf8').then(tokens, () => undefined);
}

/** Enables `wanted` (those available) in `dir/cgroup.subtree_control`; returns what is enabled afterwards. */
async function enableControllers(dir: string, wanted: readonly Controller[]): Promise<Controller[]> {
  const available = (await readTokens(join(dir, 'cgroup.controllers'))) ?? [];
  const want = wanted.filter((c) => available.includes(c));
  const control = join(dir, 'cgroup.subtree_control');
  if (want.length > 0) {
    // All at once first (one write), then one by one: the kernel refuses a whole write for one bad token.
    await writeFile(control, want.map((c) => `+${c}`).join(' ')).catch(async () => {
      for (const c of want) await writeFile(control, `+${c}`).catch(() => undefined);
    });
  }
  const enabled = (await readTokens(control)) ?? [];
  return wanted.filter((c) => enabled.includes(c));
}

/** `0::/user.slice/...` → `/user.slice/...` (the v2 line of /proc/self/cgroup). */
export function ownCgroupPath(procSelfCgroup: string): string | undefined {
  const line = procSelfCgroup.split('\n').find((l) => l.startsWith('0::'));
  return line?.slice(3).trim() || undefined;
}

async function tryParent(dir: string, prepare: () => Promise<void>, notes: string[]): Promise<V2Parent | null> {
  try {
    await prepare();
    await mkdir(dir, { recursive: true });
  } catch (err) {
    notes.push(`${dir}: ${(err as Error).message}`);
    return null;
  }
  const controllers = await enableControllers(dir, CONTROLLERS);
  if (controllers.length === 0) {
    notes.push(`${dir}: no controller of ${CONTROLLERS.join(', ')} can be enabled in its cgroup.subtree_control`);
    await rmdir(dir).catch(() => undefined);
    return null;
  }
  return { dir, controllers };
}

export async function findV2Parent(options: {
  root: string;
  parent?: string;
  procSelfCgroup: string;
  hostPid: number;
}): Promise<V2ParentSearch> {
  const notes: string[] = [];
  const { root } = options;
  if (options.parent !== undefined) {
    const given = await tryParent(options.parent, async () => undefined, notes);
    if (given !== null) return { parent: given, notes };
  }
  const atRoot = await tryParent(
    join(root, GROUP_PARENT),
    async () => {
      await enableControllers(root, CONTROLLERS);
    },
    notes,
  );
  if (atRoot !== null) return { parent: atRoot, notes };

  const own = ownCgroupPath(options.procSelfCgroup);
  if (own === undefined || own === '/') {
    notes.push('this process is in the root cgroup or its cgroup is unknown: nothing to delegate from');
    return { parent: null, notes };
  }
  const ownDir = join(root, own);
  const delegated = await tryParent(
    join(ownDir, GROUP_PARENT),
    async () => {
      const leaf = join(ownDir, HOST_LEAF);
      await mkdir(leaf, { recursive: true });
      // Every process of our cgroup (this one, and e.g. a wrapper shell) moves to the leaf; the kernel then lets
      // the now process-free cgroup enable controllers for its children.
      const members = await readMembers([join(ownDir, 'cgroup.procs')]);
      for (const pid of members.length > 0 ? members : [options.hostPid]) {
        await writeFile(join(leaf, 'cgroup.procs'), String(pid)).catch(() => undefined);
      }
      await enableControllers(ownDir, CONTROLLERS);
    },
    notes,
  );
  return { parent: delegated, notes };
}

export async function createV2Group(limits: CgroupLimits, parent: V2Parent): Promise<SandboxCgroups> {
  const dir = join(parent.dir, limits.sandboxId);
  const enabled = { memory: false, pids: false, cpu: false };
  const settings: Record<Controller, Array<[string, string, 'required' | 'optional']>> = {
    memory: [
      ['memory.max', String(limits.memoryMB * 1024 * 1024), 'required'],
      // No swap: the limit is the sandbox's memory, not memory plus whatever swap the host has.
      ['memory.swap.max', '0', 'optional'],
    ],
    pids: [['pids.max', String(limits.maxProcesses), 'required']],
    cpu: [['cpu.max', `${cpuQuotaUs(limits.cpuMilli)} ${CPU_PERIOD_US}`, 'required']],
  };
  let created = false;
  try {
    await mkdir(dir);
    created = true;
  } catch {
    // parent gone or not writable any more: no limits for this sandbox (reported by the caller)
  }
  if (created) {
    for (const controller of parent.controllers) {
      try {
        for (const [file, value, need] of settings[controller]) {
          await writeFile(join(dir, file), value).catch((err: unknown) => {
            if (need === 'required') throw err;
          });
        }
        enabled[controller] = true;
      } catch {
        // this controller's limit could not be set
      }
    }
  }
  const procsFiles = created ? [join(dir, 'cgroup.procs')] : [];
  return {
    version: 'v2',
    ...enabled,
    procsFiles,
    members: () => readMembers(procsFiles),
    async remove() {
      if (created) await rmdir(dir).catch(() => undefined);
    },
  };
}
