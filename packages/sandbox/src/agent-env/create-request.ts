/**
 * The CreateSandbox body for a sandbox spec, shared by AgentEnv.start() and the fleet's sandbox supply so
 * both ask the platform for exactly the same sandbox.
 */
import type { SandboxSpec } from '@rollout-fleet/shared';
import { RolloutError } from '@rollout-fleet/shared';
import type { CreateSandboxRequest } from '../vefaas/control-plane-types.js';

/** What `export NAME=...` accepts; anything else would fail (or inject) in the session set-up line. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Throws INPUT_INVALID naming every env variable that is not a shell identifier. */
export function checkSandboxEnvNames(sandbox: Pick<SandboxSpec, 'env'>): void {
  const badNames = Object.keys(sandbox.env).filter((name) => !ENV_NAME.test(name));
  if (badNames.length > 0) {
    throw new RolloutError(
      'INPUT_INVALID',
      `sandbox env names must be shell identifiers: ${badNames.map((n) => JSON.stringify(n)).join(', ')}`,
    );
  }
}

export function createSandboxRequest(o: {
  functionId: string;
  sandbox: SandboxSpec;
  /** The start command with its auth token (buildStartCommand). */
  command: string;
  metadata: Record<string, string>;
}): CreateSandboxRequest {
  const { sandbox } = o;
  return {
    FunctionId: o.functionId,
    // Minutes are the documented unit; round up so the platform never undercuts the lifetime.
    Timeout: Math.ceil(sandbox.lifetime_s / 60),
    InstanceImageInfo: { Image: sandbox.image, Command: o.command, Port: sandbox.port },
    CpuMilli: sandbox.cpu_milli,
    MemoryMB: sandbox.memory_mb,
    Envs: Object.entries(sandbox.env).map(([Key, Value]) => ({ Key, Value })),
    Metadata: o.metadata,
  };
}
