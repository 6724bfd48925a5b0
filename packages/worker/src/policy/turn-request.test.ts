/**
 * One turn's request against the scripted policy server (real HTTP) and the fleet-wide inflight limiter (real
 * Redis): a slot is held only while a request is in flight — a turn backing off after a 429 holds none — and an
 * aborted turn (cancel, forced re-run, shutdown) closes its request at once and gives its slot back, so a turn
 * waiting for that slot goes on. Waiting for a slot is not an error.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PolicyClient } from '../policy-client/policy-client.js';
import { RolloutError, createKeyspace, createRedis, type Keyspace, type RedisClient } from '@rollout-fleet/shared';
import { startScriptedPolicyServer, type ScriptedPolicyServer } from '@rollout-fleet/test-kit/scripted-policy';
import { InflightLimiter, endpointIdOf } from './inflight-limiter.js';
import { createTurnRequester, type PolicyRequestMetrics, type TurnRequester } from './turn-request.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SUBMIT = { reply: { tool_calls: [{ name: 'submit', arguments: {} }] } };

function countingMetrics() {
  const counts = { slotWaiters: 0, inflight: 0, failures: [] as string[] };
  const metrics: PolicyRequestMetrics = {
    slotWaiters: { inc: () => void (counts.slotWaiters += 1), dec: () => void (counts.slotWaiters -= 1) },
    inflight: { inc: () => void (counts.inflight += 1), dec: () => void (counts.inflight -= 1) },
    failures: { inc: ({ code }) => void counts.failures.push(code) },
  };
  return { counts, metrics };
}

function bodyFor(model: string): Record<string, unknown> {
  return {
    model,
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: `task of ${model}` },
    ],
    max_completion_tokens: 16,
  };
}

describe('createTurnRequester with a fleet-wide inflight limit of 1', () => {
  let server: ScriptedPolicyServer;
  let redis: RedisClient;
  let keys: Keyspace;
  let limiter: InflightLimiter;
  let slotKey: string;

  beforeAll(async () => {
    server = await startScriptedPolicyServer({
      scripts: {
        hang: { turns: [{ hang: true }] },
        throttled: { turns: [[{ error: { status: 429, message: 'Too Many Requests', retry_after: 30 } }, SUBMIT]] },
        quick: { turns: [SUBMIT] },
        waiter: { turns: [SUBMIT] },
        flaky: { turns: [[{ error: { status: 503, message: 'Service Unavailable' } }, { reset: true }, SUBMIT]] },
      },
    });
    redis = createRedis(REDIS_URL);
    keys = createKeyspace(`{rf-test-${randomUUID()}}`);
    limiter = new InflightLimiter(redis, keys, { limit: 1 });
    slotKey = keys.policyInflight(endpointIdOf(server.baseUrl));
  });

  afterAll(async () => {
    await server?.close();
    await redis.del(slotKey);
    redis.disconnect();
  });

  const requester = (metrics?: PolicyRequestMetrics): TurnRequester =>
    createTurnRequester({
      client: new PolicyClient({ baseUrl: server.baseUrl }),
      baseUrl: server.baseUrl,
      limiter,
      retries: 3,
      requestTimeoutMs: 120_000,
      minBackoffMs: 5,
      ...(metrics ? { metrics } : {}),
    });
  const turn = (request: TurnRequester, model: string, signal?: AbortSignal) =>
    request({ body: bodyFor(model), fallbackToolCallId: (i) => `call_${i}`, ...(signal ? { signal } : {}) });

  it('an aborted turn closes its request in flight and frees its slot; the turn waiting for it goes on', async () => {
    const a = countingMetrics();
    const b = countingMetrics();
    const cancel = new AbortController();
    const hung = turn(requester(a.metrics), 'hang', cancel.signal);
    hung.catch(() => undefined);
    // The hung request holds the only slot (in Redis), and is open at the server.
    await vi.waitFor(() => expect(server.requestsFor('hang').map((r) => r.outcome)).toEqual(['hang']), {
      timeout: 5000,
      interval: 10,
    });
    expect(await redis.zcard(slotKey)).toBe(1);
    expect(a.counts).toEqual({ slotWaiters: 0, inflight: 1, failures: [] });

    // A second turn to the same endpoint waits for the slot; it sends nothing meanwhile.
    const waiting = turn(requester(b.metrics), 'waiter');
    await vi.waitFor(() => expect(b.counts.slotWaiters).toBe(1), { timeout: 5000, interval: 10 });
    expect(server.requestsFor('waiter')).toEqual([]);

    const reason = new RolloutError('CANCELLED', 'run was cancelled');
    cancel.abort(reason);
    await expect(hung).rejects.toBe(reason);
    const got = await waiting;
    expect(got).toMatchObject({ retries: 0, retryCodes: [] });
    expect(got.completion.message.tool_calls?.[0]?.function.name).toBe('submit');
    expect(got.slotWaitMs).toBeGreaterThan(0);
    // The server saw the hung request closed by the client; never two requests at once.
    await vi.waitFor(() => expect(server.requestsFor('hang')[0]!.clientAborted).toBe(true), {
      timeout: 5000,
      interval: 10,
    });
    expect(server.maxInflight).toBe(1);
    expect(a.counts).toEqual({ slotWaiters: 0, inflight: 0, failures: [] });
    expect(b.counts).toEqual({ slotWaiters: 0, inflight: 0, failures: [] });
    await vi.waitFor(async () => expect(await redis.zcard(slotKey)).toBe(0), { timeout: 5000, interval: 10 });
  });

  it('a turn backing off after a 429 (Retry-After 30 s) holds no slot; aborting the back-off ends it at once', async () => {
    const a = countingMetrics();
    const cancel = new AbortController();
    const throttled = turn(requester(a.metrics), 'throttled', cancel.signal);
    throttled.catch(() => undefined);
    await vi.waitFor(() => expect(a.counts.failures).toEqual(['POLICY_THROTTLED']), { timeout: 5000, interval: 10 });
    // While it waits out the Retry-After, another turn gets the slot and its answer.
    const other = await turn(requester(), 'quick');
    expect(other.completion.message.tool_calls?.[0]?.function.name).toBe('submit');
    expect(server.requestsFor('throttled')).toHaveLength(1);
    const started = performance.now();
    const reason = new RolloutError('SUPERSEDED', 'forced while it ran');
    cancel.abort(reason);
    await expect(throttled).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5000);
    expect(server.requestsFor('throttled')).toHaveLength(1);
    expect(a.counts).toMatchObject({ slotWaiters: 0, inflight: 0 });
    await vi.waitFor(async () => expect(await redis.zcard(slotKey)).toBe(0), { timeout: 5000, interval: 10 });
  });

  it('counts each failed request by code and retries the turn to its answer', async () => {
    const a = countingMetrics();
    const got = await turn(requester(a.metrics), 'flaky');
    expect(got).toMatchObject({ retries: 2, retryCodes: ['POLICY_SERVER_ERROR', 'POLICY_NETWORK'] });
    expect(a.counts).toEqual({ slotWaiters: 0, inflight: 0, failures: ['POLICY_SERVER_ERROR', 'POLICY_NETWORK'] });
    expect(got.infraMs).toBeGreaterThan(0);
  });
});
