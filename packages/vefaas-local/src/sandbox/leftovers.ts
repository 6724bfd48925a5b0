/**
 * Cleans up after a sandbox whose host died before kill() ran (the jail itself died with its parent, but the
 * state directory and empty cgroups stay). Call it for every directory under the state root at host start.
 */
import { readFile, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { abortableDelay } from '@rollout-fleet/shared';
import { sandboxCgroupDirs, type CgroupOptions } from './cgroups/sandbox-cgroups.js';
import { killPids } from './process-tree.js';

export async function removeSandboxLeftovers(options: {
  stateRoot: string;
  sandboxId: string;
  cgroup?: CgroupOptions;
}): Promise<void> {
  const dirs = await sandboxCgroupDirs(options.sandboxId, options.cgroup);
  for (const dir of dirs) {
    const procs = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    killPids(
      procs
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map(Number),
    );
  }
  for (const dir of dirs) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const gone = await rmdir(dir).then(
        () => true,
        (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
      );
      if (gone) break;
      await abortableDelay(20); // members are still exiting
    }
  }
  await rm(join(options.stateRoot, options.sandboxId), { recursive: true, force: true });
}
