/**
 * cgroup v1: one group per controller under `<root>/<controller>/rollout-fleet/<sandboxId>`.
 *
 * A controller is used only when its hierarchy is mounted and writable here; the caller falls back to
 * RLIMIT_AS for memory when the memory controller is missing. Membership is inherited by every fork, so
 * `cgroup.procs` also lists every live process of the sandbox, which is how kill() finds them all.
 */
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CONTROLLERS,
  CPU_PERIOD_US,
  GROUP_PARENT,
  cpuQuotaUs,
  type CgroupLimits,
  type Controller,
  type SandboxCgroups,
} from './types.js';

/** The group directories a sandbox may own under a v1 root (whether or not they exist). */
export function v1GroupDirs(sandboxId: string, root: string): string[] {
  return CONTROLLERS.map((controller) => join(root, controller, GROUP_PARENT, sandboxId));
}

export async function createV1Groups(limits: CgroupLimits, root: string): Promise<SandboxCgroups> {
  const dirs: string[] = [];
  const settings: Record<Controller, Array<[string, string]>> = {
    memory: [['memory.limit_in_bytes', String(limits.memoryMB * 1024 * 1024)]],
    pids: [['pids.max', String(limits.maxProcesses)]],
    cpu: [
      ['cpu.cfs_period_us', String(CPU_PERIOD_US)],
      ['cpu.cfs_quota_us', String(cpuQuotaUs(limits.cpuMilli))],
    ],
  };
  const enabled = { memory: false, pids: false, cpu: false };
  for (const controller of CONTROLLERS) {
    const dir = join(root, controller, GROUP_PARENT, limits.sandboxId);
    try {
      await mkdir(dir, { recursive: true });
    } catch {
      continue; // controller not mounted or not writable here
    }
    try {
      for (const [file, value] of settings[controller]) await writeFile(join(dir, file), value);
      if (controller === 'memory') {
        // Without this the group could keep growing into swap; absent when swap accounting is off.
        await writeFile(join(dir, 'memory.memsw.limit_in_bytes'), settings.memory[0]?.[1] ?? '').catch(() => undefined);
      }
      enabled[controller] = true;
      dirs.push(dir);
    } catch {
      await rmdir(dir).catch(() => undefined);
    }
  }
  const procsFiles = dirs.map((dir) => join(dir, 'cgroup.procs'));
  return {
    version: 'v1',
    ...enabled,
    procsFiles,
    members: () => readMembers(procsFiles),
    async remove() {
      for (const dir of dirs) await rmdir(dir).catch(() => undefined);
    },
  };
}

/** Pids listed in `cgroup.procs` files (missing files count as empty). */
export async function readMembers(procsFiles: readonly string[]): Promise<number[]> {
  const pids = new Set<number>();
  for (const file of procsFiles) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n')) if (line.trim() !== '') pids.add(Number(line));
  }
  return [...pids];
}
