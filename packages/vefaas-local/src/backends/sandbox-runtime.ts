/** Binds the process backend to the sandbox runtime in ../sandbox/ (bubblewrap jail + Python SWE-ReX server). */
import { checkIsolation, launchSandbox, parseAuthToken, resolveImage } from '../sandbox/index.js';
import type { SandboxRuntime } from './process-backend.js';

export interface LoadedSandboxRuntime extends SandboxRuntime {
  parseAuthToken(command: string): string;
  checkIsolation(): Promise<{ ok: true } | { ok: false; reason: string }>;
}

export async function loadSandboxRuntime(): Promise<LoadedSandboxRuntime> {
  return {
    launchSandbox,
    resolveImage,
    parseAuthToken,
    checkIsolation: async () => {
      const report = checkIsolation();
      return report.bwrap ? { ok: true } : { ok: false, reason: report.reason ?? 'bubblewrap is unusable' };
    },
  };
}
