/**
 * The worker's own health endpoint (`rollout-fleet worker --health-port`), as Kubernetes probes it:
 * /healthz answers while the process lives; /readyz is 200 only while the worker runs and Redis answers,
 * 503 (with the reason) while Redis does not answer and once the worker is stopping or stopped. A taken port fails the
 * command with exit 3 before anything starts.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createRedis, findRedis, freePort, type FoundRedis } from '@rollout-fleet/shared';
import {
  startHealthServer,
  startWorker,
  type HealthServer,
  type RunningWorker,
  type WorkerHealth,
} from '@rollout-fleet/worker';
import {
  cloudEnvFor,
  configOf,
  runCli,
  silentLogger,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Host,
} from './support/pipeline-harness.js';

async function probe(url: string): Promise<{ status: number; body: WorkerHealth & { ok?: boolean } }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as WorkerHealth & { ok?: boolean } };
}

describe('worker health endpoint', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
  });
  afterAll(async () => {
    await host?.close();
  });

  it('is ready while running with Redis, not ready while Redis does not answer or once the worker stops; alive throughout', async () => {
    // A Redis of this test's own, so it can be stopped (a closed port never answers).
    const redis: FoundRedis = await findRedis(undefined, `redis://127.0.0.1:${await freePort()}`);
    expect(redis.origin).toBe('spawned');
    let worker: RunningWorker | undefined;
    let health: HealthServer | undefined;
    try {
      worker = await startWorker({
        config: configOf(testEnv({ REDIS_URL: redis.url })),
        target: host.target,
        logger: silentLogger,
      });
      const running = worker;
      health = await startHealthServer({ port: 0, readiness: () => running.health(), logger: silentLogger });
      expect(await probe(`${health.url}healthz`)).toEqual({ status: 200, body: { ok: true } });
      await vi.waitFor(async () =>
        expect(await probe(`${health!.url}readyz`)).toEqual({
          status: 200,
          body: { ready: true, worker: 'running', redis: 'ok' },
        }),
      );

      // Redis stops answering (CLIENT PAUSE on this test's own server): not ready, with the reason; still alive.
      const admin = createRedis(redis.url);
      await admin.call('CLIENT', 'PAUSE', '3000', 'ALL');
      const down = await probe(`${health.url}readyz`);
      expect(down).toEqual({
        status: 503,
        body: { ready: false, worker: 'running', redis: 'no answer to PING within 1000 ms' },
      });
      expect((await probe(`${health.url}healthz`)).status).toBe(200);
      await admin.call('CLIENT', 'UNPAUSE');
      admin.disconnect();
      await vi.waitFor(async () => expect((await probe(`${health!.url}readyz`)).status).toBe(200));

      const closing = worker.close();
      expect((await worker.health()).worker).toBe('stopping');
      await closing;
      expect(await probe(`${health.url}readyz`)).toEqual({
        status: 503,
        body: { ready: false, worker: 'stopped', redis: 'not checked (stopped)' },
      });
      expect((await fetch(`${health.url}other`)).status).toBe(404);
      expect((await fetch(`${health.url}readyz`, { method: 'POST' })).status).toBe(405);
    } finally {
      await worker?.close();
      await health?.close();
      await redis.close();
    }
  });

  it('`rollout-fleet worker --health-port` serves /readyz until SIGTERM, then exits 0', async () => {
    const port = await freePort();
    const env = { ...testEnv(), ...cloudEnvFor(host.handle) };
    const child = spawnWorker(env, ['--health-port', String(port)]);
    try {
      await vi.waitFor(
        async () =>
          expect(await probe(`http://127.0.0.1:${port}/readyz`)).toEqual({
            status: 200,
            body: { ready: true, worker: 'running', redis: 'ok' },
          }),
        {
          timeout: 30_000,
          interval: 100,
        },
      );
    } finally {
      await stopChild(child);
    }
    expect(child.exitCode, child.log()).toBe(0);
  });

  it('fails with exit 3 when the health port is taken, before starting anything', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    try {
      const run = await runCli(['worker', '--health-port', String(port)], {
        ...testEnv(),
        ...cloudEnvFor(host.handle),
      });
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(`cannot serve the health endpoint on 127.0.0.1:${port}`);
    } finally {
      taken.close();
    }
  });
});
