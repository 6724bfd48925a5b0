/** Shapes shared by the cgroup v1 and v2 back ends. */

export type Controller = 'memory' | 'pids' | 'cpu';
export const CONTROLLERS: readonly Controller[] = ['memory', 'pids', 'cpu'];

/** Name of the directory that holds every sandbox group (v1: per controller; v2: the delegated parent). */
export const GROUP_PARENT = 'rollout-fleet';
export const CPU_PERIOD_US = 100_000;

export interface CgroupLimits {
  sandboxId: string;
  memoryMB: number;
  cpuMilli: number;
  maxProcesses: number;
}

/** cpu quota per period for `cpuMilli` thousandths of a core (at least 1 ms per period, as the kernel requires). */
export function cpuQuotaUs(cpuMilli: number): number {
  return Math.max(1000, Math.round((cpuMilli * CPU_PERIOD_US) / 1000));
}

export interface SandboxCgroups {
  version: 'v1' | 'v2';
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
