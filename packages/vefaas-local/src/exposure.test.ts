/**
 * No unsafe exposure: beyond loopback the host starts only with signatures verified and a gateway key, never
 * with isolation 'none', and /_admin needs the admin key (real hosts, real HTTP).
 */
import { networkInterfaces } from 'node:os';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { exposureProblem } from './exposure.js';
import { startVefaasLocal, type VefaasLocalHandle } from './host.js';

const hosts: VefaasLocalHandle[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

/** A non-loopback address of this machine, when it has one (the host must really be reachable there). */
function lanAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

describe('exposure rules', () => {
  it('allow anything on loopback, and beyond it only verified signatures plus a gateway key, never isolation none', () => {
    const safe = { isolation: 'bwrap' as const, verifiesSignatures: true, gatewayKey: 'gk' };
    for (const host of ['127.0.0.1', '127.8.9.1', '::1', '[::1]', 'localhost']) {
      expect(exposureProblem({ host, isolation: 'none', verifiesSignatures: false, gatewayKey: null })).toBeUndefined();
    }
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'sandbox-host', '::ffff:10.0.0.1']) {
      expect(exposureProblem({ host, ...safe })).toBeUndefined();
      expect(exposureProblem({ host, ...safe, isolation: 'emulated' })).toBeUndefined();
      expect(exposureProblem({ host, ...safe, isolation: 'none' })).toMatch(/isolation 'none'/);
      expect(exposureProblem({ host, ...safe, verifiesSignatures: false })).toMatch(
        /without signature verification \(drop --no-verify-signatures\): anyone/,
      );
      expect(exposureProblem({ host, ...safe, gatewayKey: null })).toMatch(
        /without a gateway key \(--gateway-key\): anyone/,
      );
      expect(exposureProblem({ host, ...safe, gatewayKey: '' })).toMatch(/gateway key/);
    }
  });

  it('refuses to start beyond loopback without them, and creates nothing', async () => {
    await expect(
      startVefaasLocal({ host: '0.0.0.0', isolation: 'emulated', verifySignatures: false, gateway: { key: 'gk' } }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/refusing listening on 0\.0\.0\.0 .* without signature verification/),
    });
    await expect(startVefaasLocal({ host: '0.0.0.0', isolation: 'emulated' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/gateway key/),
    });
    await expect(
      startVefaasLocal({ host: '0.0.0.0', isolation: 'none', gateway: { key: 'gk' } }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(/isolation 'none'/) });
  });

  it('closes /_admin beyond loopback without an admin key, and requires the key when one is set', async () => {
    const exposed = await startVefaasLocal({ host: '0.0.0.0', isolation: 'emulated', gateway: { key: 'gk' } });
    hosts.push(exposed);
    const port = new URL(exposed.controlPlaneUrl).port;
    const base = `http://${lanAddress() ?? '127.0.0.1'}:${port}`;
    const closed = await request(`${base}/_admin/faults`);
    expect(closed.statusCode).toBe(403);
    expect(await closed.body.json()).toMatchObject({ error: { code: 'AdminDisabled' } });
    // The gateway key opens the gateway, not /_admin.
    const withGatewayKey = await request(`${base}/_admin/sandboxes`, { headers: { authorization: 'Bearer gk' } });
    expect(withGatewayKey.statusCode).toBe(403);
    await withGatewayKey.body.dump();

    const keyed = await startVefaasLocal({
      host: '0.0.0.0',
      isolation: 'emulated',
      gateway: { key: 'gk' },
      adminKey: 'admin-key-1',
    });
    hosts.push(keyed);
    const keyedBase = `http://${lanAddress() ?? '127.0.0.1'}:${new URL(keyed.controlPlaneUrl).port}`;
    for (const authorization of [undefined, 'Bearer wrong', 'Bearer gk']) {
      const denied = await request(`${keyedBase}/_admin/faults`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(denied.statusCode).toBe(401);
      await denied.body.dump();
    }
    const allowed = await request(`${keyedBase}/_admin/faults`, { headers: { authorization: 'Bearer admin-key-1' } });
    expect(allowed.statusCode).toBe(200);
    expect(await allowed.body.json()).toHaveProperty('config');
  });

  it('keeps /_admin open on loopback unless an admin key is set', async () => {
    const local = await startVefaasLocal({ isolation: 'emulated' });
    const keyed = await startVefaasLocal({ isolation: 'emulated', adminKey: 'k-2' });
    hosts.push(local, keyed);
    const open = await request(`${local.controlPlaneUrl}/_admin/sandboxes`);
    expect(open.statusCode).toBe(200);
    await open.body.dump();
    const denied = await request(`${keyed.controlPlaneUrl}/_admin/sandboxes`);
    expect(denied.statusCode).toBe(401);
    await denied.body.dump();
  });
});
