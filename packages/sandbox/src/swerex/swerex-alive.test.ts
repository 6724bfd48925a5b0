import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { RolloutError } from '@rollout-fleet/shared';
import { closeSharedDispatchers } from './dispatcher-registry.js';
import { SwerexClient } from './swerex-client.js';
import { sendJson, startWireServer, type WireHandler, type WireServer } from '@rollout-fleet/test-kit/wire-test-server';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(closeSharedDispatchers);

async function clientAnswering(handler: WireHandler): Promise<SwerexClient> {
  server = await startWireServer(handler);
  return new SwerexClient({ baseUrl: `${server.url}/p`, instanceName: 'sb-1', apiKey: 'k' });
}

const alive: WireHandler = (_req, res) => sendJson(res, 200, { is_alive: true, message: '' });

describe('isAlive', () => {
  it('GETs /is_alive pinned and authenticated, without an X-Request-ID', async () => {
    const client = await clientAnswering(alive);
    expect(await client.isAlive()).toEqual({ is_alive: true, message: '' });
    const [req] = server!.requests;
    expect(req!.method).toBe('GET');
    expect(req!.url.pathname).toBe('/p/is_alive');
    expect(req!.url.searchParams.get('faasInstanceName')).toBe('sb-1');
    expect(req!.headers['x-faas-instance-name']).toBe('sb-1');
    expect(req!.headers['x-api-key']).toBe('k');
    // A probe must not take the server's single replay slot from a call that may be retried.
    expect(req!.headers['x-request-id']).toBeUndefined();
  });

  it('reports a non-200 answer as not alive with the reference message', async () => {
    const client = await clientAnswering((_req, res) => sendJson(res, 401, { detail: 'Invalid API Key' }));
    const res = await client.isAlive();
    expect(res.is_alive).toBe(false);
    expect(res.message).toBe(`Status code 401 from ${server!.url}/p/is_alive. Message: Invalid API Key`);
  });

  it('reports a refused connection as not alive', async () => {
    const client = new SwerexClient({ baseUrl: 'http://127.0.0.1:1', apiKey: '' });
    const res = await client.isAlive({ timeoutMs: 2000 });
    expect(res.is_alive).toBe(false);
    expect(res.message).toMatch(/^Failed to connect to http:\/\/127\.0\.0\.1:1\/\n/);
  });
});

describe('waitUntilAlive', () => {
  it('succeeds after several not-alive answers', async () => {
    const client = await clientAnswering((req, res) =>
      req.index < 3 ? sendJson(res, 503, { message: 'starting' }) : alive(req, res),
    );
    const res = await client.waitUntilAlive({ timeoutMs: 10_000, intervalMs: 1 });
    expect(res.is_alive).toBe(true);
    expect(server!.requests).toHaveLength(4);
  });

  it('asks onDead while the instance is unknown, and stops waiting when it throws', async () => {
    const client = await clientAnswering((_req, res) =>
      sendJson(res, 404, { error: { code: 'InstanceNotFound', message: 'gone' } }),
    );
    const seen: string[] = [];
    const failed = new RolloutError('SANDBOX_START_FAILED', 'sandbox Failed');
    const onDead = async (err: RolloutError): Promise<void> => {
      seen.push(err.code);
      if (seen.length === 2) throw failed;
    };
    await expect(client.waitUntilAlive({ timeoutMs: 10_000, intervalMs: 1, onDead })).rejects.toBe(failed);
    expect(seen).toEqual(['SANDBOX_DEAD', 'SANDBOX_DEAD']);
    expect(server!.requests).toHaveLength(2);
  });

  it('times out with SANDBOX_START_TIMEOUT carrying the last message', async () => {
    const client = await clientAnswering((_req, res) => sendJson(res, 503, { message: 'no healthy upstream' }));
    const err: unknown = await client.waitUntilAlive({ timeoutMs: 150, intervalMs: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RolloutError);
    const rollout = err as RolloutError;
    expect(rollout.code).toBe('SANDBOX_START_TIMEOUT');
    expect(rollout.message).toMatch(
      /^Runtime did not start within 0\.15s \(tried to connect \d+ times\)\. The last await response was:\n/,
    );
    expect(rollout.message).toContain('Status code 503');
    expect(rollout.message).toContain('no healthy upstream');
    expect(server!.requests.length).toBeGreaterThan(1);
  });

  it('pauses a fraction of the time waited so far between probes (at least intervalMs, at most maxIntervalMs)', async () => {
    const seenAt: number[] = [];
    const client = await clientAnswering((req, res) => {
      seenAt.push(performance.now());
      return req.index < 12 ? sendJson(res, 503, { message: 'starting' }) : alive(req, res);
    });
    const calledAt = performance.now();
    await client.waitUntilAlive({ timeoutMs: 30_000, intervalMs: 20, overshoot: 0.5, maxIntervalMs: 200 });
    expect(seenAt).toHaveLength(13);
    const gaps = seenAt.slice(1).map((t, i) => t - (seenAt[i] as number));
    gaps.forEach((gap, i) => {
      // The pause follows the probe seen at seenAt[i]; the wait so far is at least that probe's time.
      const waited = (seenAt[i] as number) - calledAt;
      const planned = Math.min(200, Math.max(20, 0.5 * waited));
      expect(gap).toBeGreaterThanOrEqual(0.8 * planned - 2);
      // Jitter only shortens a pause; the probe's own round trip on loopback adds a little.
      expect(gap).toBeLessThanOrEqual(Math.min(200, Math.max(20, 0.5 * (waited + 15))) + 25);
    });
    // It grows with the wait (not a fixed interval) and reaches the cap.
    expect(gaps.at(-1)!).toBeGreaterThan(3 * gaps[0]!);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(0.8 * 200 - 2);
  });

  it('fails fast when the key is rejected', async () => {
    const client = await clientAnswering((_req, res) => sendJson(res, 401, { detail: 'Invalid API Key' }));
    const err: unknown = await client.waitUntilAlive({ timeoutMs: 60_000 }).catch((e: unknown) => e);
    expect((err as RolloutError).code).toBe('SWEREX_AUTH');
    expect(server!.requests).toHaveLength(1);
  });

  it('stops when aborted, with the abort reason', async () => {
    const client = await clientAnswering((_req, res) => sendJson(res, 503, {}));
    const controller = new AbortController();
    const reason = new RolloutError('WORKER_SHUTDOWN', 'bye');
    const pending = client.waitUntilAlive({ timeoutMs: 60_000, intervalMs: 5, signal: controller.signal });
    await vi.waitFor(() => expect(server!.requests.length).toBeGreaterThanOrEqual(2));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});
