/** Binds the process backend to the sandbox runtime in ../sandbox/ (bubblewrap jail + Python SWE-ReX server). */
import { checkIsolation, launchSandbox, parseAuthToken, probeSandboxLimits, resolveImage } from '../sandbox/index.js';
import type { LimitsReport } from '../sandbox/limits-report.js';
import type { CgroupOptions } from '../sandbox/cgroups/sandbox-cgroups.js';
import type { SandboxRuntime } from './process-backend.js';

export interface LoadedSandboxRuntime extends SandboxRuntime {
  parseAuthToken(command: string): string;
  checkIsolation(): Promise<{ ok: true } | { ok: false; reason: string }>;
  probeLimits(options: { isolation: 'bwrap' | 'none'; cgroup?: CgroupOptions }): Promise<LimitsReport>;
}

export async function loadSandboxRuntime(): Promise<LoadedSandboxRuntime> {
  return {
    launchSandbox,
    resolveImage,
    parseAuthToken,
    probeLimits: probeSandboxLimits,
    checkIsolation: async () => {
      const report = checkIsolation();
      return report.bwrap ? { ok: true } : { ok: false, reason: report.reason ?? 'bubblewrap is unusable' };
    },
  };
}
