/**
 * Where sandboxes come from, decided by configuration alone: real veFaaS (or any sandbox-host) when the
 * cloud settings are set, else an embedded vefaas-local in this process. Both give the same VefaasTarget,
 * so the worker and `verify` have one code path.
 */
import { fileURLToPath } from 'node:url';
import { createVefaasClient, type VefaasTarget } from '@rollout-fleet/sandbox';
import { type Config, type Logger } from '@rollout-fleet/shared';

export const EXAMPLE_IMAGES_DIR = fileURLToPath(new URL('../../examples/images', import.meta.url));

export interface OpenedTarget {
  target: VefaasTarget;
  /** Every sandbox application to create in: `default` (the one above) plus VEFAAS_FUNCTIONS, with weights. */
  targets: Array<{ id: string; target: VefaasTarget; weight: number; createRatePerS?: number }>;
  /** One line for people: where sandboxes run. */
  description: string;
  /** Secrets to keep out of logs (the embedded host's generated key). */
  secrets: string[];
  close(): Promise<void>;
}

export async function openTarget(config: Config, logger: Logger): Promise<OpenedTarget> {
  const v = config.vefaas;
  if (v.mode === 'cloud') {
    const vefaas = createVefaasClient({
      endpoint: v.endpoint,
      region: v.region,
      credentials: { accessKeyId: v.accessKeyId, secretAccessKey: v.secretAccessKey },
      timeoutMs: v.requestTimeoutMs,
    });
    const target: VefaasTarget = {
      vefaas,
      functionId: v.functionId,
      gatewayUrl: v.functionRoute,
      ...(v.gatewayKey ? { gatewayKey: v.gatewayKey } : {}),
    };
    // One client per control plane (endpoint + region): functions of one region share its keep-alive pool.
    const clients = new Map([[`${v.endpoint} ${v.region}`, vefaas]]);
    const more = v.moreFunctions.map((f) => {
      const endpoint = f.endpoint ?? v.endpoint;
      const region = f.region ?? v.region;
      const key = `${endpoint} ${region}`;
      let client = clients.get(key);
      if (!client) {
        client = createVefaasClient({
          endpoint,
          region,
          credentials: { accessKeyId: v.accessKeyId, secretAccessKey: v.secretAccessKey },
          timeoutMs: v.requestTimeoutMs,
        });
        clients.set(key, client);
      }
      const t: VefaasTarget = {
        vefaas: client,
        functionId: f.functionId,
        gatewayUrl: f.functionRoute,
        ...(v.gatewayKey ? { gatewayKey: v.gatewayKey } : {}),
      };
      return {
        id: f.id,
        target: t,
        weight: f.weight,
        ...(f.createRate === undefined ? {} : { createRatePerS: f.createRate }),
      };
    });
    return {
      target,
      targets: [{ id: 'default', target, weight: 1 }, ...more],
      description:
        `veFaaS ${v.endpoint} (function ${v.functionId}, region ${v.region})` +
        (more.length > 0 ? ` and ${more.length} more function(s): ${more.map((m) => m.id).join(', ')}` : ''),
      secrets: [],
      close: async () => {
        await Promise.all([...clients.values()].map((c) => c.close()));
      },
    };
  }
  const { startVefaasLocal } = await import('@rollout-fleet/vefaas-local');
  const host = await startVefaasLocal({
    imagesDir: v.imagesDir ?? EXAMPLE_IMAGES_DIR,
    isolation: v.isolation,
    // The embedded host's per-sandbox lines would drown the command's own output; warnings still show.
    logger: logger.child({ component: 'vefaas-local' }, { level: 'warn' }),
    gateway: { requestTimeoutMs: v.gatewayTimeoutS * 1000 },
  });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
    timeoutMs: v.requestTimeoutMs,
  });
  const target: VefaasTarget = { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl };
  return {
    target,
    targets: [{ id: 'default', target, weight: 1 }],
    description: `embedded vefaas-local at ${host.controlPlaneUrl} (${host.isolation})`,
    secrets: [host.secretAccessKey],
    close: async () => {
      await vefaas.close();
      await host.close();
    },
  };
}
