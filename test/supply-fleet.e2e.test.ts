/**
 * The fleet-wide supply with several real `rollout-fleet worker` processes against one vefaas-local (emulated
 * sandboxes, used "as the cloud"):
 * - a throttling storm: three workers, many episodes, a platform create limit (a token bucket, as a per-minute
 *   quota behaves): every episode completes in one attempt, the live sandboxes sampled from vefaas-local's admin
 *   listing never exceed RF_FLEET_MAX_SANDBOXES, 429s stay a small fraction of creates, nothing is created twice;
 * - a SIGKILLed worker's slots come back within the lease TTL, to a worker that was waiting for them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { createKeyspace, jobIdFor, type Episode } from '@rollout-fleet/shared';
import { submitRun } from '@rollout-fleet/producer';
import {
  cloudEnvFor,
  collectResults,
  configOf,
  episode,
  leasesOf,
  openPipeline,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

interface AdminSandbox {
  id: string;
  status: string;
  metadata: Record<string, string>;
}

async function adminSandboxes(host: Host): Promise<AdminSandbox[]> {
  const res = await request(`${host.handle.controlPlaneUrl}/_admin/sandboxes`);
  return ((await res.body.json()) as { sandboxes: AdminSandbox[] }).sandboxes;
}

/** Samples the platform's live (not Terminating) sandboxes of one fleet until stopped; resolves to the peak. */
function samplePeak(host: Host, fleetId: () => string | undefined): { stop: () => Promise<number> } {
  let peak = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const id = fleetId();
      if (id) {
        const live = (await adminSandboxes(host)).filter(
          (s) => s.metadata['rf-fleet'] === id && s.status !== 'Terminating',
        ).length;
        peak = Math.max(peak, live);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return peak;
    },
  };
}

function oneStepEpisodes(runId: string, count: number, steps = 2): Episode[] {
  return Array.from({ length: count }, (_, i) =>
    episode(runId, `e${i}`, {
      sandbox: { image: 'python' },
      tools: ['execute_bash'],
      trajectory: Array.from({ length: steps }, (_, k) => ({
        name: 'execute_bash',
        arguments: { command: `echo ${k}` },
      })),
    }),
  );
}

describe('the sandbox supply across worker processes', () => {
  let host: Host;
  let pipeline: Pipeline | undefined;
  let workers: Array<ReturnType<typeof spawnWorker>> = [];

  beforeAll(async () => {
    host = await startHost({ isolation: 'emulated' });
  });
  afterEach(async () => {
    await Promise.all(workers.map((w) => stopChild(w, 'SIGKILL')));
    workers = [];
    host.handle.faults.configure({});
    await pipeline?.close();
    pipeline = undefined;
  });
  afterAll(async () => {
    await host?.close();
  });

  it('a throttling storm: every episode completes in one attempt, the live cap holds, 429s are rare, nothing is created twice', async () => {
    const MAX_SANDBOXES = 6;
    host.handle.faults.configure({
      seed: 5,
      // The platform allows 15 creates/s with a burst of 5; the fleet is told the same rate with a smaller burst.
      throttle: { ratePerSecond: 15, burst: 5 },
      coldStart: { delayMs: { min: 30, max: 120 } },
      gateway: { latencyMs: { '/run_in_session': { min: 20, max: 80 } } },
    });
    const before = host.handle.faults.stats;
    const env = {
      ...testEnv({
        RF_WORKER_CONCURRENCY: '8',
        RF_ATTEMPTS: '1',
        RF_FLEET_MAX_SANDBOXES: String(MAX_SANDBOXES),
        RF_FLEET_MAX_STARTING: '4',
        RF_FLEET_CREATE_RATE: '15',
        RF_FLEET_CREATE_BURST: '3',
        RF_LEASE_TTL_S: '5',
        RF_REAPER_INTERVAL_S: '1',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
      }),
      ...cloudEnvFor(host.handle),
    };
    const config = configOf(env);
    pipeline = openPipeline(config);
    const runId = 'storm';
    const episodes = oneStepEpisodes(runId, 60);
    workers = [spawnWorker(env), spawnWorker(env), spawnWorker(env)];
    const keys = createKeyspace(config.queue.prefix);
    let fleetId: string | undefined;
    const p = pipeline;
    const sampler = samplePeak(host, () => fleetId);
    // The first worker up creates the fleet id; sampling starts from then on.
    await vi.waitFor(
      async () => {
        fleetId = (await p.redis.get(keys.fleetId())) ?? undefined;
        expect(fleetId).toBeDefined();
      },
      { timeout: 30_000, interval: 100 },
    );
    await submitRun({
      queue: p.queue,
      redis: p.redis,
      keys: p.keys,
      runId,
      episodes,
      policy: { attempts: 1, backoffMs: 100, retentionS: 3600 },
    });

    const results = await collectResults(p, runId, episodes.length);
    const peak = await sampler.stop();
    const after = host.handle.faults.stats;
    expect(results.map((r) => r.status)).toEqual(episodes.map(() => 'completed'));
    for (const r of results) expect(r.attempts).toHaveLength(1);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(MAX_SANDBOXES);
    const creates = after.createsAdmitted - before.createsAdmitted;
    const throttled = after.throttled - before.throttled;
    // One create per episode: no create was repeated or multiplied.
    expect(creates).toBe(episodes.length);
    expect(throttled / creates).toBeLessThan(0.05);
    expect(workers.map((w) => w.exitCode)).toEqual([null, null, null]);
  });

  it("a SIGKILLed worker's slots come back within the lease TTL, to a worker waiting for them", async () => {
    const TTL_S = 2;
    host.handle.faults.configure({ gateway: { latencyMs: { '/run_in_session': 1_000 } } });
    const env = {
      ...testEnv({
        RF_WORKER_CONCURRENCY: '3',
        RF_FLEET_MAX_SANDBOXES: '3',
        RF_LEASE_TTL_S: String(TTL_S),
        RF_REAPER_INTERVAL_S: '1',
        RF_LOCK_DURATION_MS: '3000',
        RF_STALLED_INTERVAL_MS: '1000',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
      }),
      ...cloudEnvFor(host.handle),
    };
    const config = configOf(env);
    pipeline = openPipeline(config);
    const p = pipeline;
    const runId = 'slots';
    const victim = spawnWorker(env);
    workers = [victim];
    await submitRun({ queue: p.queue, redis: p.redis, keys: p.keys, runId, episodes: oneStepEpisodes(runId, 3, 6) });
    // The victim holds all three slots, mid-episode.
    const victimTickets = await vi.waitFor(
      async () => {
        const leases = await leasesOf(p);
        expect(leases.filter((l) => l.sandbox && l.worker?.includes(`-${victim.pid}-`))).toHaveLength(3);
        return leases.map((l) => l.ticket!);
      },
      { timeout: 40_000, interval: 100 },
    );
    const waiting = spawnWorker(env);
    workers.push(waiting);
    await submitRun({
      queue: p.queue,
      redis: p.redis,
      keys: p.keys,
      runId: 'slots-2',
      episodes: oneStepEpisodes('slots-2', 3, 1),
    });
    // The second worker wants slots and cannot have any.
    await vi.waitFor(async () => expect(await p.redis.zcard(p.keys.slotWaiters())).toBeGreaterThan(0), {
      timeout: 40_000,
      interval: 100,
    });

    await stopChild(victim, 'SIGKILL');
    const killedAt = performance.now();
    await vi.waitFor(
      async () => {
        const live = await p.redis.zrange(p.keys.leases(), 0, -1);
        expect(live.filter((t) => victimTickets.includes(t))).toEqual([]);
        expect((await leasesOf(p)).some((l) => l.worker?.includes(`-${waiting.pid}-`))).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    const freedAfterMs = performance.now() - killedAt;
    expect(freedAfterMs).toBeLessThan(TTL_S * 1000 + 1_500);

    // Everything finishes: the second run, and the victim's episodes taken over after their locks lapse.
    const second = await collectResults(p, 'slots-2', 3);
    expect(second.every((r) => r.status === 'completed')).toBe(true);
    const first = await collectResults(p, runId, 3);
    expect(first.every((r) => r.status === 'completed')).toBe(true);
    const job = await p.queue.getJob(jobIdFor(runId, 'e0', 0));
    expect(job).toBeDefined();
  });
});
