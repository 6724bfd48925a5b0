import { createVefaasClient, type VefaasClient } from '@rollout-fleet/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startVefaasLocal, type VefaasLocalHandle } from './host.js';
import { swerexCommand } from '../test/control-plane-caller.js';

describe('the shared VefaasClient against vefaas-local', () => {
  let host: VefaasLocalHandle;
  let client: VefaasClient;
  const create = () =>
    client.createSandbox({
      FunctionId: host.functionId,
      Timeout: 5,
      InstanceImageInfo: { Image: 'img:1', Command: swerexCommand('t'), Port: 8000 },
    });

  beforeAll(async () => {
    host = await startVefaasLocal({ isolation: 'emulated' });
    client = createVefaasClient({
      endpoint: host.controlPlaneUrl,
      region: host.region,
      credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
      retry: false,
    });
  });
  afterAll(async () => {
    await client.close();
    await host.close();
  });

  it('runs the whole lifecycle: create, describe, list, set timeout, kill', async () => {
    const { SandboxId } = await create();
    expect((await client.describeSandbox({ FunctionId: host.functionId, SandboxId })).Status).toBe('Ready');
    const listed = await client.listSandboxes({ FunctionId: host.functionId, SandboxId });
    expect(listed.Total).toBe(1);
    const extended = await client.setSandboxTimeout({ FunctionId: host.functionId, SandboxId, Timeout: 30 });
    expect(Date.parse(extended.ExpireAt)).toBeGreaterThan(Date.now() + 29 * 60_000);
    await client.killSandbox({ FunctionId: host.functionId, SandboxId });
    await expect(client.describeSandbox({ FunctionId: host.functionId, SandboxId })).rejects.toMatchObject({
      code: 'VEFAAS_NOT_FOUND',
    });
  });

  it('maps this host’s errors to the shared error codes', async () => {
    const wrongSecret = createVefaasClient({
      endpoint: host.controlPlaneUrl,
      region: host.region,
      credentials: { accessKeyId: host.accessKeyId, secretAccessKey: 'wrong' },
      retry: false,
    });
    try {
      await expect(wrongSecret.listSandboxes({ FunctionId: host.functionId })).rejects.toMatchObject({
        code: 'VEFAAS_AUTH',
      });
    } finally {
      await wrongSecret.close();
    }
    await expect(
      client.createSandbox({ FunctionId: host.functionId, InstanceImageInfo: { Image: 'img:1', Command: '' } }),
    ).rejects.toMatchObject({ code: 'VEFAAS_BAD_REQUEST' });
    host.faults.configure({ throttle: { createPerSecond: 0 } });
    await expect(create()).rejects.toMatchObject({ code: 'VEFAAS_THROTTLED' });
    host.faults.configure({ coldStart: { timeoutRate: 1 } });
    await expect(create()).rejects.toMatchObject({ code: 'VEFAAS_SERVER_ERROR' });
    host.faults.configure({ controlPlane: { errorRate: 1 } });
    await expect(client.listSandboxes({ FunctionId: host.functionId })).rejects.toMatchObject({
      code: 'VEFAAS_SERVER_ERROR',
    });
    host.faults.reset();
  });
});
