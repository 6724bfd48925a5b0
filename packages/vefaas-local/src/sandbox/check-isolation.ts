/** Probes whether the bubblewrap jail recipe can run on this machine (binary present, namespaces allowed). */
import { spawnSync } from 'node:child_process';
import { namespaceArgs, systemBindArgs } from './bwrap-args.js';
import type { IsolationReport } from './types.js';

const BWRAP = '/usr/bin/bwrap';
const PROBE_TIMEOUT_MS = 10_000;

let cached: IsolationReport | undefined;

/** Runs `bwrap --version` and a trial jail (`true` with the sandbox's namespaces and binds). Cached per process. */
export function checkIsolation(options: { refresh?: boolean } = {}): IsolationReport {
  if (cached !== undefined && options.refresh !== true) return cached;
  cached = probe();
  return cached;
}

function probe(): IsolationReport {
  const version = spawnSync(BWRAP, ['--version'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  if (version.error !== undefined) return { bwrap: false, reason: `${BWRAP} cannot run: ${version.error.message}` };
  const versionText = version.stdout.trim();
  const trial = spawnSync(BWRAP, [...namespaceArgs(false), ...systemBindArgs(), '--', '/usr/bin/true'], {
    encoding: 'utf8',
    timeout: PROBE_TIMEOUT_MS,
  });
  if (trial.status !== 0) {
    const why = trial.stderr.trim() || trial.error?.message || `exit status ${String(trial.status)}`;
    return { bwrap: false, version: versionText, reason: `a trial jail failed: ${why}` };
  }
  return { bwrap: true, version: versionText };
}
