/** The need of every test that runs real sandboxes: bubblewrap installed and allowed to create namespaces. */
import type { Need } from './needs.js';
import { checkIsolation } from '@rollout-fleet/vefaas-local';

export function bwrapNeed(): Need {
  const report = checkIsolation();
  if (report.bwrap) return { what: 'bubblewrap', missing: undefined, install: 'sudo apt-get install -y bubblewrap' };
  // Installed but refused: the kernel does not let unprivileged users create the namespaces.
  const installed = report.version !== undefined;
  return {
    what: installed ? 'user namespaces for bubblewrap' : 'bubblewrap',
    missing: report.reason,
    install: installed
      ? 'allow unprivileged user namespaces (sudo sysctl -w kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0)'
      : 'sudo apt-get install -y bubblewrap',
  };
}
