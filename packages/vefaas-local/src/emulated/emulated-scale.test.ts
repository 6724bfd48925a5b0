import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVefaasClient, type VefaasClient } from '@rollout-fleet/sandbox';
import { startVefaasLocal, type VefaasLocalHandle } from '../host.js';
import { swerexCommand } from '../../test/control-plane-caller.js';

const SANDBOXES = 1000;
const CONCURRENCY = 50;

async function inBatches<T>(count: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await work(i);
      }
    }),
  );
  return results;
}

describe('emulated mode at fleet scale', () => {
  let host: VefaasLocalHandle;
  let client: VefaasClient;
  const agent = new Agent({ connections: CONCURRENCY });

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
    await agent.close();
    await host.close();
  });

  it(`creates ${SANDBOXES} sandboxes through the shared VefaasClient and each answers through the gateway`, async () => {
    const ids = await inBatches(SANDBOXES, CONCURRENCY, async (i) => {
      const { SandboxId } = await client.createSandbox({
        FunctionId: host.functionId,
        Timeout: 10,
        InstanceImageInfo: { Image: 'img:1', Command: swerexCommand(`tok-${i}`), Port: 8000 },
        Metadata: { bench: 'scale' },
      });
      return SandboxId;
    });
    expect(new Set(ids).size).toBe(SANDBOXES);
    expect(host.sandboxCounts()).toMatchObject({ total: SANDBOXES, Ready: SANDBOXES });

    const alive = await inBatches(SANDBOXES, CONCURRENCY, async (i) => {
      const response = await request(`${host.gatewayUrl}/is_alive`, {
        dispatcher: agent,
        headers: { 'x-faas-instance-name': ids[i] ?? '', 'x-api-key': `tok-${i}` },
      });
      return ((await response.body.json()) as { is_alive?: boolean }).is_alive === true;
    });
    expect(alive.every(Boolean)).toBe(true);

    const listed = await client.listAllSandboxes({
      FunctionId: host.functionId,
      Metadata: { bench: 'scale' },
      PageSize: 100,
    });
    expect(listed).toHaveLength(SANDBOXES);

    await client.killSandbox({ FunctionId: host.functionId, SandboxId: ids[0] ?? '' });
    await expect(
      client.describeSandbox({ FunctionId: host.functionId, SandboxId: ids[0] ?? '' }),
    ).rejects.toMatchObject({ code: 'VEFAAS_NOT_FOUND' });
    await host.close();
    expect(host.liveSandboxes()).toBe(0);
    expect(host.sandboxCounts().total).toBe(0);
  });
});
