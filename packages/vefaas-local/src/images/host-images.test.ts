/** Through the signed control plane: CreateSandbox's image name is mapped to the imported image, as on veFaaS. */
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { startVefaasLocal, type VefaasLocalHandle } from '../host.js';
import { okResult, swerexCommand } from '../../test/control-plane-caller.js';
import { RECIPES, imageToolsNeed, importTestImage, type ImportedFixture } from '../../test/image-fixture.js';

const TOKEN = 'image-token';

describeWith([bwrapNeed(), imageToolsNeed()], 'vefaas-local serving imported images', () => {
  let host: VefaasLocalHandle;
  let python: ImportedFixture;
  beforeAll(async () => {
    python = await importTestImage(RECIPES.python, 'sweb.eval.x86_64.demo__repo-1');
    host = await startVefaasLocal({ isolation: 'bwrap', imagesDir: python.imagesDir });
  }, 240_000);
  afterAll(async () => {
    await host?.close();
    await python?.cleanup();
  });

  it('starts a sandbox of a SWE-bench-style image reference and serves it through the gateway', async () => {
    const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', {
      FunctionId: host.functionId,
      InstanceImageInfo: {
        Image: 'enterprise-public-cn-beijing.cr.volces.com/swe-bench/sweb.eval.x86_64.demo__repo-1:latest',
        Command: swerexCommand(TOKEN),
        Port: 8000,
      },
    });
    expect((await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId }))['Status']).toBe(
      'Ready',
    );
    const headers = { 'x-faas-instance-name': SandboxId, 'x-api-key': TOKEN, 'content-type': 'application/json' };
    const executed = await request(`${host.gatewayUrl}/execute`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ command: 'cat /etc/os-release; command -v python3; pwd', shell: true }),
    });
    const body = (await executed.body.json()) as { stdout: string; exit_code: number };
    expect(body.exit_code).toBe(0);
    expect(body.stdout).toContain(`ID=${RECIPES.python.name}\n`);
    expect(body.stdout).toContain('/opt/py/bin/python3\n/testbed\n');
    await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId });
  });
});
