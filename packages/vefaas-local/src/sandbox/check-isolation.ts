/** Probes whether the bubblewrap jail recipe can run on this machine (binary present, namespaces allowed). */
import { spawnSync } from 'node:child_process';
import { findOnPath } from '@rollout-fleet/shared';
import { namespaceArgs, systemBindArgs } from './bwrap-args.js';
import type { IsolationReport } from './types.js';

const PROBE_TIMEOUT_MS = 10_000;

let cached: IsolationReport | undefined;

/** Runs `bwrap --version` and a trial jail (`true` with the sandbox's namespaces and binds). Cached per process. */
export function checkIsolation(options: { refresh?: boolean } = {}): IsolationReport {
  if (cached !== undefined && options.refresh !== true) return cached;
  cached = probe();
  return cached;
}

/** bubblewrap as found on PATH (Debian installs /usr/bin/bwrap; other systems elsewhere). */
export function bwrapPath(): string | undefined {
  return findOnPath('bwrap');
}

function probe(): IsolationReport {
  const BWRAP = bwrapPath();
  if (BWRAP === undefined) return { bwrap: false, reason: 'bwrap is not on PATH' };
  const version = spawnSync(BWRAP, ['--version'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  if (version.error !== undefined) return { bwrap: false, reason: `${BWRAP} cannot run: ${version.error.message}` };
  const versionText = version.stdout.trim();
  const trial = spawnSync(
    BWRAP,
    [...namespaceArgs(false), ...systemBindArgs({ network: false }), '--', '/usr/bin/true'],
    {
      encoding: 'utf8',
      timeout: PROBE_TIMEOUT_MS,
    },
  );
  if (trial.status !== 0) {
    const why = trial.stderr.trim() || trial.error?.message || `exit status ${String(trial.status)}`;
    return { bwrap: false, version: versionText, reason: `a trial jail failed: ${why}` };
  }
  // Options that appeared after 0.4 (Ubuntu 22.04 ships 0.6, without --size): used when present.
  const help = spawnSync(BWRAP, ['--help'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS });
  const helpText = `${help.stdout ?? ''}${help.stderr ?? ''}`;
  return {
    bwrap: true,
    version: versionText,
    tmpfsSize: /--size\b/.test(helpText),
    tmpfsPerms: /--perms\b/.test(helpText),
  };
}
