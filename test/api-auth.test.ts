/**
 * The API's authentication, route by route: every operation of the published OpenAPI document (and routes it
 * does not know) answers 401 without the bearer token — on loopback too when a token is configured — and with a
 * wrong one; with the token it gets past auth. Without a token the API serves loopback only (a non-loopback
 * Host is refused, DNS rebinding) and refuses cross-site writes. The token never reaches a log line.
 */
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { renderOpenApi, startApi } from '@rollout-fleet/api';
import { createLogger } from '@rollout-fleet/shared';
import { memorySink } from '@rollout-fleet/test-kit/memory-sink';
import { startTestApi, type TestApi } from './support/api-harness.js';
import { configOf, silentLogger, startHost, testEnv, type Host } from './support/pipeline-harness.js';

const TOKEN = 'tok-api-5f0c9e2b7d41a8';

/** Every documented operation, with its path parameters filled in. */
function operations(): Array<{ method: string; path: string }> {
  const doc = renderOpenApi() as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((method) => ({
      method: method.toUpperCase(),
      path:
        path.replace('{run_id}', 'some-run').replace('{session_id}', 'ses_nope') +
        (path.endsWith('/files') ? '?path=/tmp/x' : ''),
    })),
  );
}

describe('API authentication', () => {
  let host: Host;
  const started: TestApi[] = [];

  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((t) => t.close()));
  });
  afterAll(async () => {
    await host.close();
  });

  async function start(env: Record<string, string> = {}): Promise<TestApi & { logs: () => string }> {
    const sink = memorySink();
    const t = await startTestApi({
      env,
      host,
      logger: createLogger({ level: 'trace', format: 'json', destination: sink }),
    });
    started.push(t);
    return { ...t, logs: () => sink.text() };
  }

  it('answers 401 on every route without the token or with a wrong one, on loopback too, and enqueues nothing', async () => {
    const t = await start({ RF_API_TOKEN: TOKEN });
    const ops = [...operations(), { method: 'GET', path: '/v1/no-such-route' }, { method: 'GET', path: '/' }];
    expect(ops.length).toBeGreaterThanOrEqual(14);
    const body = JSON.stringify({ run_id: 'r1', episodes: [{ instance_id: 'i', sandbox: { image: 'pyutils' } }] });
    for (const { method, path } of ops) {
      for (const authorization of [
        undefined,
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(0, -1)}`,
        `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`,
        TOKEN,
      ]) {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        };
        const res = await fetch(`${t.api.url}${path}`, {
          method,
          headers,
          ...(method === 'GET' || method === 'DELETE' ? {} : { body }),
        });
        expect(res.status, `${method} ${path} with ${authorization ?? 'nothing'}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="rollout-fleet api"');
        expect(await res.json()).toMatchObject({ error: { code: 'API_UNAUTHORIZED', class: 'input' } });
      }
    }
    const { prefix, name } = t.config.queue;
    expect((await t.pipeline.redis.keys(`${prefix}:${name}:*`)).filter((key) => !key.endsWith(':meta'))).toEqual([]);
    expect(await t.pipeline.redis.exists(t.pipeline.keys.run('r1'), t.pipeline.keys.runJobs('r1'))).toBe(0);

    // With the token every route gets past auth (to its own answer: 404 for the unknown run and session, ...).
    for (const { method, path } of operations()) {
      const res = await fetch(`${t.api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
      });
      expect(res.status, `${method} ${path}`).not.toBe(401);
      expect(res.status, `${method} ${path}`).not.toBe(403);
      await res.arrayBuffer();
    }
    expect(t.logs()).toContain('api listening');
    expect(t.logs()).not.toContain(TOKEN.slice(4));
  });

  it('without a token: serves loopback, refuses a non-loopback Host (DNS rebinding) and cross-site writes', async () => {
    const t = await start();
    expect((await t.call('/v1/sessions')).status).toBe(200);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${t.api.url}/v1/sessions`, { headers: { host: 'attacker.example:80' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.once('error', reject).end();
    });
    expect(status).toBe(403);
    const submit = { run_id: 'cross-site', episodes: [{ instance_id: 'i', sandbox: { image: 'pyutils' } }] };
    const foreign = await t.call('/v1/runs', {
      method: 'POST',
      json: submit,
      headers: { origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: { code: 'API_FORBIDDEN' } });
    expect(await t.pipeline.redis.exists(t.pipeline.keys.run('cross-site'))).toBe(0);
    // A program (no Origin) and a same-origin page may write.
    expect((await t.call('/v1/runs', { method: 'POST', json: submit })).status).toBe(200);
    expect((await t.call('/v1/runs', { method: 'POST', json: submit, headers: { origin: t.api.url } })).status).toBe(
      200,
    );
  });

  it('refuses to listen on a public address without a token, and does with one', async () => {
    const config = configOf(testEnv());
    await expect(
      startApi({ config, port: 0, host: '0.0.0.0', logger: silentLogger, target: host.target, reaper: false }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/refusing to listen on 0\.0\.0\.0 without credentials; set RF_API_TOKEN/),
    });
    const withToken = configOf(testEnv({ RF_API_TOKEN: TOKEN }));
    const api = await startApi({
      config: withToken,
      port: 0,
      host: '0.0.0.0',
      logger: silentLogger,
      target: host.target,
      reaper: false,
    });
    try {
      expect(api.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
      const res = await fetch(`http://127.0.0.1:${api.port}/v1/sessions`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status).toBe(200);
    } finally {
      await api.close();
    }
  });
});
