/**
 * What this host can enforce for every sandbox, found once at start-up by creating (and removing) a probe
 * group: the host logs it and serves it in /healthz, so a machine without a controller says so instead of
 * running sandboxes silently without the limit.
 */
import { randomBytes } from 'node:crypto';
import { checkIsolation } from './check-isolation.js';
import { cgroupHost, createSandboxCgroups, type CgroupOptions } from './cgroups/sandbox-cgroups.js';
import type { EnforcedLimits, Isolation } from './types.js';

export type LimitName = 'memory' | 'processes' | 'cpu' | 'disk';

export interface UnenforcedLimit {
  limit: LimitName;
  /** What holds instead (`rlimit-as`: per process only; `none`: nothing). */
  fallback: string;
  why: string;
}

export interface LimitsReport {
  cgroup: 'v1' | 'v2' | 'none';
  /** v2: the delegated directory sandbox groups are created in. */
  cgroupParent?: string;
  enforced: EnforcedLimits;
  unenforced: UnenforcedLimit[];
  /** Why cgroup v2 candidates were passed over. */
  notes: string[];
}

export async function probeSandboxLimits(options: {
  isolation: Isolation;
  cgroup?: CgroupOptions;
}): Promise<LimitsReport> {
  const host = await cgroupHost(options.cgroup);
  const probe = await createSandboxCgroups(
    {
      sandboxId: `probe-${process.pid}-${randomBytes(4).toString('hex')}`,
      memoryMB: 512,
      cpuMilli: 1000,
      maxProcesses: 64,
    },
    options.cgroup,
  );
  await probe?.remove();
  const via = probe === null ? undefined : (`cgroup-${probe.version}` as const);
  const jail = options.isolation === 'bwrap' ? checkIsolation() : undefined;
  const enforced: EnforcedLimits = {
    memory: probe?.memory === true && via !== undefined ? via : 'rlimit-as',
    processes: probe?.pids === true && via !== undefined ? via : 'none',
    cpu: probe?.cpu === true && via !== undefined ? via : 'none',
    disk:
      jail === undefined ? 'none' : jail.tmpfsSize === true ? 'tmpfs-size' : probe?.memory === true ? 'memory' : 'none',
  };
  const where =
    host.version === 'v2'
      ? host.parent === null
        ? 'no delegated cgroup v2 subtree is writable'
        : `not enabled in ${host.parent.dir}/cgroup.subtree_control`
      : host.version === 'v1'
        ? `the cgroup v1 hierarchy for it is not mounted or not writable under ${host.root}`
        : `no cgroup hierarchy at ${host.root}`;
  const unenforced: UnenforcedLimit[] = [];
  if (enforced.memory === 'rlimit-as')
    unenforced.push({
      limit: 'memory',
      fallback: 'rlimit-as',
      why: `memory controller: ${where}; RLIMIT_AS bounds each process, not the sandbox`,
    });
  if (enforced.processes === 'none')
    unenforced.push({
      limit: 'processes',
      fallback: 'none',
      why: `pids controller: ${where}; a fork bomb is not contained`,
    });
  if (enforced.cpu === 'none') unenforced.push({ limit: 'cpu', fallback: 'none', why: `cpu controller: ${where}` });
  if (enforced.disk === 'none') {
    unenforced.push({
      limit: 'disk',
      fallback: 'none',
      why:
        options.isolation === 'bwrap'
          ? 'bwrap cannot size a tmpfs and no memory cgroup bounds it'
          : "isolation 'none': sandboxes write to this machine's disk",
    });
  } else if (enforced.disk === 'memory') {
    unenforced.push({
      limit: 'disk',
      fallback: 'memory',
      why: `bwrap ${jail?.version ?? ''} has no --size (bubblewrap ≥ 0.7): writable space is bounded only by the memory limit`.replace(
        '  ',
        ' ',
      ),
    });
  }
  const report: LimitsReport = { cgroup: host.version, enforced, unenforced, notes: host.notes };
  if (host.version === 'v2' && host.parent !== null) report.cgroupParent = host.parent.dir;
  return report;
}

/** One log line's worth: `cpu (cpu controller: ...), disk (...)`. */
export function describeUnenforced(report: LimitsReport): string {
  return report.unenforced.map((u) => `${u.limit} (${u.why})`).join('; ');
}
