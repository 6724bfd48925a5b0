/**
 * What every worker a CLI command starts gets from its process, in one place so that `worker` and `api --worker`
 * cannot drift apart: the sandbox targets it opened, and the environment as the source of policy endpoint keys.
 */
import type { OpenedTarget } from './target.js';

export function processWorkerOptions(opened: OpenedTarget): {
  target: OpenedTarget['target'];
  targets: OpenedTarget['targets'];
  secret: (name: string) => string | undefined;
} {
  return {
    target: opened.target,
    targets: opened.targets,
    // Policy endpoint keys are named by episodes (policy.api_key_env) and read here, at the process boundary.
    secret: (name) => process.env[name],
  };
}
