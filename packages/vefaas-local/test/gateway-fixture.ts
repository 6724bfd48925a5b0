/**
 * Test helper: a vefaas-local host with one real bubblewrap sandbox, and a conformance target that reaches it
 * THROUGH THE GATEWAY (function route, X-Faas-Instance-Name pin) over the shared keep-alive pool that
 * SwerexClient uses.
 */
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { closeSharedDispatchers, dispatcherFor } from '@rollout-fleet/sandbox';
import { startVefaasLocal, type VefaasLocalHandle } from '../src/host.js';
import { okResult, swerexCommand } from './control-plane-caller.js';
import { makeImageTemplate } from './sandbox-fixture.js';
import { dispatcherTarget, type SwerexConformanceTarget } from '@rollout-fleet/test-kit/swerex-conformance';

export interface GatewayFixture {
  host: VefaasLocalHandle;
  sandboxId: string;
  target: SwerexConformanceTarget;
  cleanup(): Promise<void>;
}

export async function startGatewayFixture(): Promise<GatewayFixture> {
  const imageDir = await makeImageTemplate();
  const host = await startVefaasLocal({ isolation: 'bwrap' });
  const token = randomUUID();
  const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', {
    FunctionId: host.functionId,
    InstanceImageInfo: { Image: `file:${imageDir}`, Command: swerexCommand(token), Port: 8000 },
  });
  const route = new URL(host.gatewayUrl);
  const target = dispatcherTarget({
    origin: route.origin,
    dispatcher: dispatcherFor(route.origin),
    authToken: token,
    headers: { 'x-faas-instance-name': SandboxId },
    pathPrefix: route.pathname,
  });
  return {
    host,
    sandboxId: SandboxId,
    target,
    async cleanup() {
      await closeSharedDispatchers();
      await host.close();
      await rm(imageDir, { recursive: true, force: true });
    },
  };
}
