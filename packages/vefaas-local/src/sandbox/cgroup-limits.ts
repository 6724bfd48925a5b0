/**
 * Per-sandbox cgroup v1 groups (memory, pids, cpu) under `<root>/<controller>/rollout-fleet/<sandboxId>`.
 *
 * A controller is used only when its hierarchy is mounted and writable here; the caller falls back to
 * RLIMIT_AS for memory when the memory controller is missing. Membership is inherited by every fork, so
 * `cgroup.procs` also lists every live process of the sandbox, which is how kill() finds them all.
 */
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const GROUP_PARENT = 'rollout-fleet';
const CPU_PERIOD_US = 100_000;

export interface CgroupLimits {
  sandboxId: string;
  memoryMB: number;
  cpuMilli: number;
  maxProcesses: number;
  /** @defaultValue '/sys/fs/cgroup' */
  root?: string;
}

export interface SandboxCgroups {
  memory: boolean;
  pids: boolean;
  cpu: boolean;
  /** `cgroup.procs` files the launcher joins before exec'ing the jail. */
  procsFiles: string[];
  /** Host pids currently in the sandbox's groups. */
  members(): Promise<number[]>;
  /** Removes the groups; they must be empty. */
  remove(): Promise<void>;
}

const CONTROLLERS = ['memory', 'pids', 'cpu'] as const;

/** The group directories a sandbox may own (whether or not they exist). */
export function sandboxCgroupDirs(sandboxId: string, root = '/sys/fs/cgroup'): string[] {
  return CONTROLLERS.map((controller) => join(root, controller, GROUP_PARENT, sandboxId));
}

export async function createSandboxCgroups(limits: CgroupLimits): Promise<SandboxCgroups> {
  const root = limits.root ?? '/sys/fs/cgroup';
  const dirs: string[] = [];
  const settings: Record<'memory' | 'pids' | 'cpu', Array<[string, string]>> = {
    memory: [['memory.limit_in_bytes', String(limits.memoryMB * 1024 * 1024)]],
    pids: [['pids.max', String(limits.maxProcesses)]],
    cpu: [
      ['cpu.cfs_period_us', String(CPU_PERIOD_US)],
      ['cpu.cfs_quota_us', String(Math.max(1000, Math.round((limits.cpuMilli * CPU_PERIOD_US) / 1000)))],
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
    ...enabled,
    procsFiles,
    async members() {
      const pids = new Set<number>();
      for (const file of procsFiles) {
        const text = await readFile(file, 'utf8').catch(() => '');
        for (const line of text.split('\n')) if (line.trim() !== '') pids.add(Number(line));
      }
      return [...pids];
    },
    async remove() {
      for (const dir of dirs) await rmdir(dir).catch(() => undefined);
    },
  };
}
