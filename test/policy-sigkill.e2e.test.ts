/**
 * A worker process killed with SIGKILL in the middle of a policy episode (the model has taken one turn, the
 * second turn's command is running): another worker process takes the stalled job over and runs the whole agent
 * loop again in a new sandbox, from the first request; exactly one result is written, and its inflight slot and
 * sandbox do not outlive the dead worker. Workers are real `rollout-fleet worker` child processes; the scripted
 * policy server runs in the test and records both runs' requests.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EpisodeSchema, jobIdFor, type EpisodeResult } from '@rollout-fleet/shared';
import { startScriptedPolicyServer, type ScriptedPolicyServer } from '@rollout-fleet/test-kit/scripted-policy';
import { submitRun } from '@rollout-fleet/producer';
import {
  cloudEnvFor,
  collectResults,
  configOf,
  fleetSandboxes,
  leasesOf,
  openPipeline,
  resultsOf,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { POLICY_KEY, POLICY_KEY_ENV, call, calcEval, calls, policyEpisode } from './support/policy-scripts.js';

const RUN = 'policy-sigkill-e2e';
const EPISODE = 'slow-policy';

describe('SIGKILL of a worker mid policy episode', () => {
  let host: Host;
  let pipeline: Pipeline;
  let server: ScriptedPolicyServer;
  let workers: Array<ReturnType<typeof spawnWorker>> = [];

  beforeAll(async () => {
    host = await startHost();
    server = await startScriptedPolicyServer({
      apiKey: POLICY_KEY,
      scripts: {
        [EPISODE]: {
          turns: [calls(call.bash('echo started')), calls(call.bash('sleep 5 && echo slept')), calls(call.submit())],
        },
      },
    });
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => stopChild(w, 'SIGKILL')));
    await pipeline?.close();
    await server?.close();
    await host?.close();
  });

  it('re-runs the episode once on another worker from its first turn and writes exactly one result', async () => {
    const env = {
      ...testEnv({
        RF_WORKER_CONCURRENCY: '1',
        RF_LOCK_DURATION_MS: '4000',
        RF_STALLED_INTERVAL_MS: '1000',
        RF_LEASE_TTL_S: '4',
        RF_REAPER_INTERVAL_S: '1',
        RF_SHUTDOWN_GRACE_S: '5',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
      }),
      ...cloudEnvFor(host.handle),
      [POLICY_KEY_ENV]: POLICY_KEY,
    };
    const config = configOf(env);
    pipeline = openPipeline(config);
    const episode = EpisodeSchema.parse(
      policyEpisode({
        runId: RUN,
        id: EPISODE,
        baseUrl: server.baseUrl,
        evalSpec: await calcEval(),
        policy: { limits: { max_turns: 10 } },
      }),
    );
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: [episode],
    });
    workers = [spawnWorker(env), spawnWorker(env)];

    // One worker holds the job and its leased sandbox, and has finished turn 1: turn 2's `sleep 5` runs.
    const jobId = jobIdFor(RUN, EPISODE, 0);
    const first = await vi.waitFor(
      async () => {
        const job = await pipeline.queue.getJob(jobId);
        expect(await job?.getState()).toBe('active');
        expect(job?.progress).toMatchObject({ step: 1, total: 10, label: 'turn 1/10' });
        const [lease] = await leasesOf(pipeline);
        expect(lease?.sandbox).toBeTruthy();
        return { sandboxId: lease!.sandbox!, workerId: lease!.worker! };
      },
      { timeout: 40_000, interval: 100 },
    );
    const victim = workers.find((w) => first.workerId.includes(`-${w.pid}-`));
    const survivor = workers.find((w) => w !== victim);
    expect(victim, `lease owner ${first.workerId} is one of the worker processes`).toBeDefined();
    await stopChild(victim!, 'SIGKILL');
    expect(victim!.signalCode).toBe('SIGKILL');

    const [result] = (await collectResults(pipeline, RUN, 1)) as [EpisodeResult];
    expect(result).toMatchObject({
      status: 'completed',
      failure: null,
      exit_status: 'submitted',
      resolved: false,
      reward: 0,
    });
    expect(result.worker_id).toContain(`-${survivor!.pid}-`);
    expect(result.sandbox_id).not.toBe(first.sandboxId);
    expect(result.turns!.map((t) => t.index)).toEqual([0, 1, 2]);
    expect(result.steps.map((s) => [s.turn, s.exit_code, s.output.trim()])).toEqual([
      [0, 0, 'started'],
      [1, 0, 'slept'],
    ]);

    // The re-run started over from the first request: the server saw turn 1 from both workers, turn 3 only once.
    const seen = server.requestsFor(EPISODE).map((r) => [r.turn, r.attempt]);
    expect(seen.filter(([turn]) => turn === 0)).toEqual([
      [0, 1],
      [0, 2],
    ]);
    expect(seen.filter(([turn]) => turn === 2)).toEqual([[2, 1]]);

    // Exactly once: one stream entry, no duplicate commit.
    await vi.waitFor(async () => expect(await (await pipeline.queue.getJob(jobId))?.getState()).toBe('completed'), {
      timeout: 10_000,
    });
    expect(await resultsOf(pipeline, RUN)).toHaveLength(1);
    expect(await pipeline.redis.hgetall(pipeline.keys.run(RUN))).toMatchObject({
      total: '1',
      done: '1',
      completed: '1',
    });
    expect(Number((await pipeline.redis.hget(pipeline.keys.run(RUN), 'duplicates')) ?? 0)).toBe(0);

    // Nothing of the dead worker outlives it: its sandbox is reaped, no inflight slot is held.
    await vi.waitFor(
      async () => expect((await fleetSandboxes(host, config)).map((s) => s.id)).not.toContain(first.sandboxId),
      { timeout: 20_000, interval: 200 },
    );
    const slotKeys = await pipeline.redis.keys(`rf:${config.queue.prefix}:policy-inflight:*`);
    expect((await Promise.all(slotKeys.map((key) => pipeline.redis.zcard(key)))).filter((n) => n > 0)).toEqual([]);
    await stopChild(survivor!, 'SIGTERM');
    expect(survivor!.exitCode, survivor!.log()).toBe(0);
  });
});
