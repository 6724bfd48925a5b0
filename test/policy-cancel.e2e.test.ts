/**
 * A policy episode cancelled mid-turn, on vefaas-local + Redis against the scripted policy server: its request in
 * flight (a hang the request timeout would let run for minutes) is aborted within seconds, its fleet-wide inflight
 * slot (RF_POLICY_MAX_INFLIGHT=1) goes back at once, and a policy episode of another run that was waiting for that
 * slot — not an error — goes on to its graded result. The cancelled one is written once: failed, CANCELLED,
 * reward null; nothing is left behind (sandboxes, slots, the worker's policy gauges). A worker shutting down
 * mid-turn does the same within its grace and hands the episode back, to be run from its first turn elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EpisodeSchema, type EpisodeResult } from '@rollout-fleet/shared';
import { startScriptedPolicyServer, type ScriptedPolicyServer } from '@rollout-fleet/test-kit/scripted-policy';
import { cancelRun, submitRun } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  collectResults,
  configOf,
  fleetSandboxes,
  openPipeline,
  resultsOf,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { FIX, POLICY_KEY, POLICY_KEY_ENV, call, calcEval, calls, policyEpisode } from './support/policy-scripts.js';

const RUN = 'policy-cancel';
const OTHER_RUN = 'policy-cancel-other';
const HUNG = 'hangs-in-turn-2';
const WAITER = 'waits-for-the-slot';
const HANDED_BACK = 'hangs-until-handed-back';

describe('cancelling a run while its policy request is in flight', () => {
  let host: Host;
  let pipeline: Pipeline;
  let server: ScriptedPolicyServer;
  let worker: RunningWorker | undefined;
  /** The first turn-2 request of HANDED_BACK hangs; after the hand-back the episode submits. */
  let hungOnce = false;

  beforeAll(async () => {
    host = await startHost();
    server = await startScriptedPolicyServer({
      apiKey: POLICY_KEY,
      scripts: {
        [HUNG]: { turns: [calls(FIX), { hang: true }] },
        [WAITER]: { turns: [calls(FIX), calls(call.submit())] },
        [HANDED_BACK]: {
          turns: [
            calls(FIX),
            () => {
              if (hungOnce) return calls(call.submit());
              hungOnce = true;
              return { hang: true };
            },
          ],
        },
      },
    });
  });

  afterAll(async () => {
    await worker?.close();
    await pipeline?.close();
    await server?.close();
    await host?.close();
  });

  it('aborts the request, frees its slot for the waiting episode of another run, and writes CANCELLED once', async () => {
    const config = configOf(testEnv({ RF_POLICY_MAX_INFLIGHT: '1' }));
    pipeline = openPipeline(config);
    const evalSpec = await calcEval();
    const gauge = async (name: 'slotWaiters' | 'inflight'): Promise<number> =>
      (await worker!.metrics.policy[name].get()).values[0]?.value ?? 0;
    const slotsHeld = async (): Promise<number[]> => {
      const slotKeys = await pipeline.redis.keys(`rf:${config.queue.prefix}:policy-inflight:*`);
      return Promise.all(slotKeys.map((key) => pipeline.redis.zcard(key)));
    };

    // The request timeout would let the hang run for 10 minutes; only the cancel may end it.
    const hung = EpisodeSchema.parse(
      policyEpisode({
        runId: RUN,
        id: HUNG,
        baseUrl: server.baseUrl,
        evalSpec,
        policy: { limits: { request_timeout_s: 600, retries: 0 } },
      }),
    );
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: [hung],
    });
    worker = await startWorker({
      config,
      target: host.target,
      logger: silentLogger,
      concurrency: 2,
      workerId: 'w-cancel',
      secret: (name) => (name === POLICY_KEY_ENV ? POLICY_KEY : undefined),
    });

    // Turn 2's request hangs at the server, holding the endpoint's only slot.
    await vi.waitFor(
      () =>
        expect(server.requestsFor(HUNG).map((r) => [r.turn, r.outcome])).toEqual([
          [0, 'reply'],
          [1, 'hang'],
        ]),
      { timeout: 60_000, interval: 50 },
    );
    expect(await slotsHeld()).toEqual([1]);
    expect(await gauge('inflight')).toBe(1);

    // Another run's policy episode on the same endpoint waits for that slot, sending nothing.
    const waiter = EpisodeSchema.parse(
      policyEpisode({ runId: OTHER_RUN, id: WAITER, baseUrl: server.baseUrl, evalSpec }),
    );
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: OTHER_RUN,
      episodes: [waiter],
    });
    await vi.waitFor(async () => expect(await gauge('slotWaiters')).toBe(1), { timeout: 60_000, interval: 50 });
    expect(server.requestsFor(WAITER)).toEqual([]);

    const cancelledAt = Date.now();
    await cancelRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: RUN });
    const [cancelled] = (await collectResults(pipeline, RUN, 1)) as [EpisodeResult];
    expect(Date.now() - cancelledAt).toBeLessThan(15_000);
    expect(cancelled).toMatchObject({ status: 'failed', resolved: null, reward: null, failure: { code: 'CANCELLED' } });
    expect(cancelled.attempts.map((a) => a.failure?.code)).toEqual(['CANCELLED']);
    // The worker closed the hung request itself (the server never answered it).
    await vi.waitFor(() => expect(server.requestsFor(HUNG)[1]!.clientAborted).toBe(true), {
      timeout: 10_000,
      interval: 50,
    });

    const [other] = (await collectResults(pipeline, OTHER_RUN, 1)) as [EpisodeResult];
    expect(other).toMatchObject({
      status: 'completed',
      failure: null,
      resolved: true,
      reward: 1,
      exit_status: 'submitted',
    });
    expect(other.turns![0]!.slot_wait_ms).toBeGreaterThan(0);
    expect(other.turns!.map((t) => t.retries)).toEqual([0, 0]);
    // One slot, one request at a time at the server, throughout.
    expect(server.maxInflight).toBe(1);

    // Written once; nothing held afterwards.
    expect(await pipeline.redis.hgetall(pipeline.keys.run(RUN))).toMatchObject({
      total: '1',
      done: '1',
      cancelled: '1',
    });
    expect((await slotsHeld()).filter((n) => n > 0)).toEqual([]);
    expect([await gauge('slotWaiters'), await gauge('inflight')]).toEqual([0, 0]);
    await vi.waitFor(async () => expect(await fleetSandboxes(host, config)).toEqual([]), {
      timeout: 15_000,
      interval: 100,
    });
    expect(server.requestsFor(HUNG)).toHaveLength(2);
  }, 180_000);

  it('a worker shutting down mid-turn closes the request within its grace, frees the slot and hands the episode back', async () => {
    const config = configOf(testEnv({ RF_POLICY_MAX_INFLIGHT: '1', RF_SHUTDOWN_GRACE_S: '1' }));
    const p = openPipeline(config);
    const secret = (name: string): string | undefined => (name === POLICY_KEY_ENV ? POLICY_KEY : undefined);
    let second: RunningWorker | undefined;
    try {
      const episode = EpisodeSchema.parse(
        policyEpisode({
          runId: RUN,
          id: HANDED_BACK,
          baseUrl: server.baseUrl,
          evalSpec: await calcEval(),
          policy: { limits: { request_timeout_s: 600, retries: 0 } },
        }),
      );
      await submitRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId: RUN, episodes: [episode] });
      const first = await startWorker({
        config,
        target: host.target,
        logger: silentLogger,
        concurrency: 1,
        workerId: 'w-stopping',
        secret,
      });
      await vi.waitFor(
        () =>
          expect(server.requestsFor(HANDED_BACK).map((r) => [r.turn, r.outcome])).toEqual([
            [0, 'reply'],
            [1, 'hang'],
          ]),
        { timeout: 60_000, interval: 50 },
      );

      const stopping = performance.now();
      await first.close();
      // Within the grace (1 s) plus the hand-back, not the request timeout (10 min).
      expect(performance.now() - stopping).toBeLessThan(15_000);
      expect(server.requestsFor(HANDED_BACK)[1]!.clientAborted).toBe(true);
      const slotKeys = await p.redis.keys(`rf:${config.queue.prefix}:policy-inflight:*`);
      expect((await Promise.all(slotKeys.map((key) => p.redis.zcard(key)))).filter((n) => n > 0)).toEqual([]);
      expect(await resultsOf(p, RUN)).toEqual([]);

      // Another worker runs it again from its first turn, to one result.
      second = await startWorker({
        config,
        target: host.target,
        logger: silentLogger,
        concurrency: 1,
        workerId: 'w-next',
        secret,
      });
      const [result] = (await collectResults(p, RUN, 1)) as [EpisodeResult];
      expect(result).toMatchObject({
        status: 'completed',
        failure: null,
        resolved: true,
        reward: 1,
        exit_status: 'submitted',
        worker_id: 'w-next',
      });
      expect(result.turns).toHaveLength(2);
      expect(server.requestsFor(HANDED_BACK).map((r) => [r.turn, r.outcome])).toEqual([
        [0, 'reply'],
        [1, 'hang'],
        [0, 'reply'],
        [1, 'reply'],
      ]);
    } finally {
      await second?.close();
      await p.close();
    }
  }, 180_000);
});
