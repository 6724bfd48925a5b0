/**
 * The fleet at scale, on emulated vefaas-local with time-compressed latencies (every latency ÷ --compress):
 * cold starts 3–8 s, 20 steps of 50–500 ms each, a platform create limit of 500/min (a token bucket holding
 * one second of its rate), W `rollout-fleet worker` processes sharing a fleet cap of C sandboxes.
 *
 * 1. Sweep: N episodes. makespan ÷ ideal bound, where the ideal bound is the larger of (sandbox-seconds ÷ cap)
 *    and (episodes ÷ platform create rate): the fleet runs at whichever limit binds. Goals: ≤ 1.05, 0 failed,
 *    platform 429s < 1 % of creates.
 * 2. RL: B batches of G episodes (32 instances × 8 samples, new images every batch); each batch is submitted
 *    after the previous one completed plus a training pause, and its images are announced (`--announce`)
 *    when the previous batch is submitted. Mean batch makespan with the warm pool ÷ without. Goal: ≤ 0.85.
 *
 *   npm run bench:fleet -- [--episodes 2000] [--workers 4] [--concurrency 60] [--cap 200] [--compress 10]
 *                          [--steps 20] [--per-minute 500] [--batches 8] [--batch 256] [--pause-s 30]
 *                          [--scenario all|sweep|rl] [--worker-exec-argv='--cpu-prof --cpu-prof-dir=/tmp/prof']
 *
 * Last line: {"makespan_ratio":…,"prefetch_ratio":…,"failed":…,"throttled_ratio":…}
 */
import { parseArgs } from 'node:util';
import { announceDemand, EpisodeSchema, specKey, type Episode, type EpisodeResult } from '@rollout-fleet/shared';
import type { FaultConfig } from '@rollout-fleet/vefaas-local';
import { openBenchFleet, type BenchFleet } from './lib/bench-fleet.js';
import type { HostProcess } from './lib/host-process.js';
import { cpuSeconds } from './lib/proc-cpu.js';
import { machineLoad, mean, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    episodes: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '60' },
    cap: { type: 'string', default: '200' },
    compress: { type: 'string', default: '10' },
    steps: { type: 'string', default: '20' },
    'per-minute': { type: 'string', default: '500' },
    batches: { type: 'string', default: '8' },
    batch: { type: 'string', default: '256' },
    'pause-s': { type: 'string', default: '30' },
    scenario: { type: 'string', default: 'all' },
    'worker-exec-argv': { type: 'string', default: '' },
  },
});
const N = Number(values.episodes);
const WORKERS = Number(values.workers);
const CONCURRENCY = Number(values.concurrency);
const CAP = Number(values.cap);
const K = Number(values.compress);
const STEPS = Number(values.steps);
const PER_MINUTE = Number(values['per-minute']);
const BATCHES = Number(values.batches);
const BATCH = Number(values.batch);
const PAUSE_MS = (Number(values['pause-s']) * 1000) / K;
const SCENARIO = values.scenario;

/** The platform's create rate, creates/s, compressed like everything else. */
const RATE = (PER_MINUTE / 60) * K;
/**
 * The platform admits one second of its rate at once after a quiet spell: a per-minute quota smoothed into a
 * token bucket (a per-minute window would allow far more). Network and event-loop jitter are not compressed
 * with the rest, so the burst is in seconds of rate, not a fixed count.
 */
const PLATFORM_BURST = Math.max(1, Math.round(RATE));
const SAMPLES_PER_INSTANCE = 8;

/** vefaas-local runs in its own process, as the cloud is a separate system (bench/lib/host-process.ts). */
type Fleet = BenchFleet<HostProcess>;

const faults: FaultConfig = {
  seed: 11,
  throttle: { ratePerSecond: RATE, burst: PLATFORM_BURST },
  coldStart: { delayMs: { min: Math.round(3000 / K), max: Math.round(8000 / K) } },
  gateway: { latencyMs: { '/run_in_session': { min: Math.round(50 / K), max: Math.round(500 / K) } } },
};

/** The fleet's burst: below the platform's, room for network jitter (see fleetEnv). */
const FLEET_BURST = Math.max(1, Math.floor(PLATFORM_BURST / 2));

/** The fleet is told the platform's rate, with a burst below the platform's (room for network jitter). */
function fleetEnv(extra: Record<string, string>): Record<string, string> {
  return {
    RF_FLEET_MAX_SANDBOXES: String(CAP),
    RF_FLEET_MAX_STARTING: String(CAP),
    RF_FLEET_CREATE_RATE: RATE.toFixed(3),
    RF_FLEET_CREATE_BURST: String(FLEET_BURST),
    RF_FLEET_CREATE_RECOVER_S: String(Math.max(1, Math.round(300 / K))),
    RF_STRAGGLERS: 'false',
    ...extra,
  };
}

function episode(runId: string, id: string, image: string): Episode {
  return EpisodeSchema.parse({
    run_id: runId,
    episode_id: id,
    instance_id: image,
    sandbox: { image },
    tools: ['execute_bash'],
    trajectory: Array.from({ length: STEPS }, () => ({ name: 'execute_bash', arguments: { command: 'true' } })),
  });
}

async function withFleet<T>(env: Record<string, string>, fn: (fleet: Fleet) => Promise<T>): Promise<T> {
  const workerExecArgv = values['worker-exec-argv'].split(' ').filter((arg) => arg !== '');
  const fleet = await openBenchFleet({
    isolation: 'emulated',
    host: { faults },
    env: fleetEnv(env),
    workerExecArgv,
    hostProcess: true,
  });
  try {
    await fleet.startWorkers({ count: WORKERS, concurrency: CONCURRENCY, processes: true });
    return await fn(fleet);
  } finally {
    await fleet.close();
  }
}

/**
 * The supply's own account of a scenario (creates by outcome, missed create slots, waits, warm pool events), and
 * how late creates went out after their booked slots (the room the fleet's burst must leave below the platform's).
 */
async function supplyLine(fleet: Fleet): Promise<string> {
  const counters = await fleet.fleetCounters([
    'rf_sandbox_creates',
    'rf_sandbox_create_slots_missed',
    'rf_sandbox_wait_seconds',
    'rf_warm_pool',
    'rf_sandbox_create_late',
  ]);
  const short = (name: string): string => name.replace(/^rf_(sandbox_)?/, '').replace('_total', '');
  const late = [...counters].filter(([name]) => name.startsWith('rf_sandbox_create_late_seconds_bucket'));
  const sent = counters.get('rf_sandbox_create_late_seconds_count') ?? 0;
  const lateLine = late
    .filter(([, n]) => n < sent)
    .map(([name, n]) => `${sent - n} > ${Number(/le=([\d.]+)/.exec(name)?.[1]) * 1000} ms`)
    .join(', ');
  const rest = [...counters].filter(([name]) => !name.startsWith('rf_sandbox_create_late'));
  return (
    rest.map(([name, value]) => `${short(name)} ${Number.isInteger(value) ? value : value.toFixed(1)}`).join(', ') +
    `; creates sent late after their booked slot: ${lateLine || `none of ${sent} > 5 ms`} (of ${sent})`
  );
}

const failedOf = (results: EpisodeResult[]): number => results.filter((r) => r.status !== 'completed').length;
const s = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

interface SweepFigures {
  ratio: number;
  failed: number;
  creates: number;
  throttled: number;
}

async function sweep(): Promise<SweepFigures> {
  return withFleet({ RF_WARM_POOL_MAX: '0' }, async (fleet) => {
    const runId = `fleet-sweep-${Date.now()}`;
    const episodes = Array.from({ length: N }, (_, i) => episode(runId, `e${i}`, `img-${i % 50}`));
    const before = (await fleet.host.stats()).faults;
    // CPU per episode: the worker processes, and this process (the bench's own Redis reads and enqueueing) and
    // vefaas-local's.
    const workerCpu = async (): Promise<number> =>
      (await Promise.all(fleet.workerPids().map(cpuSeconds))).reduce((a, b) => a + b, 0);
    const hostCpu = async (): Promise<number> => (fleet.host.pid === undefined ? 0 : cpuSeconds(fleet.host.pid));
    const cpuBefore = { workers: await workerCpu(), host: await hostCpu(), bench: process.cpuUsage() };
    // Creates admitted per second of the run: where the fleet kept the platform's rate, and where it did not.
    // Each second: leases (slots) held, of which starting, and the platform's sandboxes.
    const perSecond: number[] = [];
    const slots: string[] = [];
    // Each second: how many creates the fleet is behind its own schedule (its burst at the first create, then the
    // rate), so the seconds where the makespan is lost stand out (a steady number is a loss taken earlier).
    const behind: number[] = [];
    let last = before.createsAdmitted;
    const sample = async (): Promise<void> => {
      const [host, leases, starting, waiters] = await Promise.all([
        fleet.host.stats(),
        fleet.redis.zcard(fleet.keys.leases()),
        fleet.redis.zcard(fleet.keys.starting()),
        fleet.redis.zcard(fleet.keys.slotWaiters()),
      ]);
      const admittedNow = host.faults.createsAdmitted - before.createsAdmitted;
      perSecond.push(host.faults.createsAdmitted - last);
      last = host.faults.createsAdmitted;
      if (host.creates.first > 0)
        behind.push(
          Math.round(Math.min(N, FLEET_BURST + (RATE * (Date.now() - host.creates.first)) / 1000) - admittedNow),
        );
      slots.push(`${leases}/${starting}/${host.counts.total - (host.counts.Terminating ?? 0)}/${waiters}`);
    };
    // One sample at a time, in order, one a second.
    let sampling = Promise.resolve();
    const sampler = setInterval(() => {
      sampling = sampling.then(sample);
    }, 1000);
    const run = await fleet
      .submitAndWait({ runId, episodes, timeoutMs: 600_000 })
      .finally(() => clearInterval(sampler));
    await sampling;
    const cpu = {
      workers: (await workerCpu()) - cpuBefore.workers,
      host: (await hostCpu()) - cpuBefore.host,
      bench: process.cpuUsage(cpuBefore.bench),
    };
    const after = await fleet.host.stats();
    const { usage } = after;
    const admitted = after.creates;
    const makespanMs = run.lastCommitAt - run.startedAt;
    const creates = after.faults.createsAdmitted - before.createsAdmitted;
    const throttled = after.faults.throttled - before.throttled;
    const bySandboxes = usage.sandboxSeconds / CAP;
    const byRate = N / RATE;
    const ideal = Math.max(bySandboxes, byRate);
    const total = run.results.map((r) => r.timings.total_ms);
    console.log(
      `sweep: ${N} episodes × ${STEPS} steps, ${WORKERS} workers × ${CONCURRENCY}, cap ${CAP}, platform ${RATE.toFixed(1)} creates/s (${PER_MINUTE}/min ÷ ${K})`,
    );
    console.log(`  makespan ${s(makespanMs)} (first enqueue → last commit); complete ${run.complete}`);
    console.log(
      `  every job enqueued at ${s(run.enqueuedAt - run.startedAt)}; first episode started at ${s(Math.min(...run.results.map((r) => Date.parse(r.attempts[0]?.started_at ?? '') || Infinity)) - run.startedAt)}, ` +
        `first create admitted at ${s(admitted.first - run.startedAt)}, ` +
        `last at ${s(admitted.last - run.startedAt)} (ideal at the fleet's rate: ${s((1000 * (N - FLEET_BURST)) / RATE)} after the first); ` +
        `last commit ${s(run.lastCommitAt - admitted.last)} after the last create`,
    );
    console.log(
      `  ideal bound ${ideal.toFixed(2)} s = max(sandbox-seconds ${usage.sandboxSeconds.toFixed(0)} ÷ ${CAP} = ${bySandboxes.toFixed(2)} s, ${N} ÷ ${RATE.toFixed(1)}/s = ${byRate.toFixed(2)} s)`,
    );
    console.log(`  makespan ÷ ideal = ${(makespanMs / 1000 / ideal).toFixed(3)}`);
    console.log(
      `  creates ${creates} (${usage.created} sandboxes made), platform 429s ${throttled} (${((100 * throttled) / Math.max(1, creates)).toFixed(2)} %), failed ${failedOf(run.results)}`,
    );
    const benchS = (cpu.bench.user + cpu.bench.system) / 1e6;
    const cores = (seconds: number): string => (seconds / (makespanMs / 1000)).toFixed(2);
    console.log(
      `  CPU per episode: workers ${((1000 * cpu.workers) / N).toFixed(2)} ms, vefaas-local ${((1000 * cpu.host) / N).toFixed(2)} ms, bench ${((1000 * benchS) / N).toFixed(2)} ms ` +
        `(${cores(cpu.workers)}, ${cores(cpu.host)} and ${cores(benchS)} cores over the makespan)`,
    );
    console.log(`  episode total p50 ${s(quantile(total, 0.5))}, p90 ${s(quantile(total, 0.9))}; ${machineLoad()}`);
    console.log(`  supply: ${await supplyLine(fleet)}`);
    console.log(`  creates per second: ${perSecond.join(' ')}`);
    console.log(
      `  creates behind the fleet's schedule (burst, then the rate from the first create) each second: ${behind.join(' ')}`,
    );
    console.log(`  leases/starting/sandboxes/slot waiters each second: ${slots.join(' ')}`);
    return {
      ratio: makespanMs / 1000 / ideal,
      failed: failedOf(run.results) + (run.complete ? 0 : N - run.results.length),
      creates,
      throttled,
    };
  });
}

interface RlFigures {
  meanMs: number;
  failed: number;
  creates: number;
  throttled: number;
}

async function rl(pool: boolean): Promise<RlFigures> {
  const env: Record<string, string> = pool
    ? {
        RF_WARM_POOL_MAX: String(CAP),
        RF_WARM_IDLE_S: '60',
        RF_WARM_INTERVAL_MS: '100',
        RF_WARM_LOOKAHEAD: String(BATCH),
      }
    : { RF_WARM_POOL_MAX: '0' };
  return withFleet(env, async (fleet) => {
    const stamp = Date.now();
    const batchOf = (b: number): Episode[] => {
      const runId = `rl-${stamp}-${pool ? 'warm' : 'cold'}-${b}`;
      return Array.from({ length: BATCH }, (_, i) =>
        episode(
          runId,
          `i${Math.floor(i / SAMPLES_PER_INSTANCE)}-s${i % SAMPLES_PER_INSTANCE}`,
          `rl-${stamp}-b${b}-i${Math.floor(i / SAMPLES_PER_INSTANCE)}`,
        ),
      );
    };
    const batches = Array.from({ length: BATCHES }, (_, b) => batchOf(b));
    const before = (await fleet.host.stats()).faults;
    const makespans: number[] = [];
    let failed = 0;
    await announceDemand({
      redis: fleet.redis,
      keys: fleet.keys,
      runId: batches[0]![0]!.run_id,
      episodes: batches[0]!,
    });
    for (let b = 0; b < BATCHES; b++) {
      // The trainer trains on the previous batch meanwhile.
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const batch = batches[b]!;
      const mine = new Set(batch.map((e) => specKey(e.sandbox, e.tools)));
      const atSubmit = await poolState(fleet, mine);
      const trace: string[] = [];
      const warmIds = atSubmit.sandboxes;
      const sampler = setInterval(
        () =>
          void poolState(fleet, mine).then((p) => {
            trace.push(p.line);
            for (const id of p.sandboxes) warmIds.add(id);
          }),
        250,
      );
      const running = fleet
        .submitAndWait({ runId: batch[0]!.run_id, episodes: batch, timeoutMs: 300_000 })
        .finally(() => clearInterval(sampler));
      // It knows the next batch already: announce it while this one runs.
      const next = batches[b + 1];
      if (next) await announceDemand({ redis: fleet.redis, keys: fleet.keys, runId: next[0]!.run_id, episodes: next });
      const run = await running;
      makespans.push(run.lastCommitAt - run.startedAt);
      console.log(
        `  batch ${b}: ${s(run.lastCommitAt - run.startedAt)}; at submit ${atSubmit.line}; ${phases(run.results, run.startedAt, warmIds)}`,
      );
      console.log(
        `    every 250 ms (leases/starting/waiters, this batch's pool ready+warming, other specs' ready+warming): ${trace.join(' ')}`,
      );
      failed += failedOf(run.results) + (run.complete ? 0 : batch.length - run.results.length);
    }
    const after = (await fleet.host.stats()).faults;
    const creates = after.createsAdmitted - before.createsAdmitted;
    const throttled = after.throttled - before.throttled;
    console.log(
      `rl ${pool ? 'with' : 'without'} warm pool: ${BATCHES} batches × ${BATCH} (pause ${s(PAUSE_MS)}): makespans ${makespans.map((m) => (m / 1000).toFixed(2)).join(' ')} s; mean ${s(mean(makespans))}; creates ${creates}, 429s ${throttled}, failed ${failed}; ${machineLoad()}`,
    );
    console.log(`  supply: ${await supplyLine(fleet)}`);
    return { meanMs: mean(makespans), failed, creates, throttled };
  });
}

/** Leases, starting, waiters, and the pool's ready/warming sandboxes of `mine` (this batch's specs) vs the rest. */
async function poolState(fleet: Fleet, mine: Set<string>): Promise<{ line: string; sandboxes: Set<string> }> {
  const [leases, starting, waiters, pool] = await Promise.all([
    fleet.redis.zcard(fleet.keys.leases()),
    fleet.redis.zcard(fleet.keys.starting()),
    fleet.redis.zcard(fleet.keys.slotWaiters()),
    fleet.redis.hgetall(fleet.keys.pool()),
  ]);
  const n = { mineReady: 0, mineWarming: 0, otherReady: 0, otherWarming: 0 };
  for (const entry of Object.values(pool)) {
    const [spec, state] = entry.split('\t');
    const ours = mine.has(spec ?? '');
    if (state === 'ready') n[ours ? 'mineReady' : 'otherReady'] += 1;
    else n[ours ? 'mineWarming' : 'otherWarming'] += 1;
  }
  const pipeline = fleet.redis.pipeline();
  for (const ticket of Object.keys(pool)) pipeline.hget(`${fleet.keys.slotBase()}lease:${ticket}`, 'sandbox');
  const ids = ((await pipeline.exec()) ?? [])
    .map(([, id]) => id)
    .filter((id): id is string => typeof id === 'string' && id !== '');
  return {
    line: `${leases}/${starting}/${waiters} ${n.mineReady}+${n.mineWarming} ${n.otherReady}+${n.otherWarming}`,
    sandboxes: new Set(ids),
  };
}

/** When each episode started, got its sandbox and ended (s after submit), warm (from the pool) and cold apart. */
function phases(results: EpisodeResult[], startedAt: number, warmIds: Set<string>): string {
  const warm = results.filter((r) => r.sandbox_id !== null && warmIds.has(r.sandbox_id));
  const cold = results.filter((r) => r.sandbox_id === null || !warmIds.has(r.sandbox_id));
  const startOf = (r: EpisodeResult): number => Date.parse(r.attempts.at(-1)?.started_at ?? '') - startedAt;
  const heldOf = (r: EpisodeResult): number => startOf(r) + r.timings.sandbox_acquire_ms;
  const endOf = (r: EpisodeResult): number => Date.parse(r.finished_at) - startedAt;
  const q = (xs: number[], ...ps: number[]): string =>
    xs.length ? ps.map((p) => (quantile(xs, p) / 1000).toFixed(2)).join('/') : '-';
  const line = (rs: EpisodeResult[]): string =>
    `start ${q(rs.map(startOf), 0, 0.5, 1)}, held ${q(rs.map(heldOf), 0, 0.5, 1)}, acquire ${q(
      rs.map((r) => r.timings.sandbox_acquire_ms),
      0.5,
      1,
    )}, ` +
    `replay ${q(
      rs.map((r) => r.timings.replay_ms),
      0.5,
      1,
    )}, end ${q(rs.map(endOf), 0, 0.25, 0.5, 1)}`;
  return `warm ${warm.length}: ${line(warm)}; cold ${cold.length}: ${line(cold)} (min/p50/max; end min/p25/p50/max)`;
}

console.log(`bench:fleet on emulated vefaas-local, latencies ÷ ${K}; ${machineLoad()}`);
const sweepFigures = SCENARIO === 'rl' ? undefined : await sweep();
let prefetch: number | null = null;
let rlFailed = 0;
let rlCreates = 0;
let rlThrottled = 0;
if (SCENARIO !== 'sweep') {
  const cold = await rl(false);
  const warm = await rl(true);
  prefetch = warm.meanMs / cold.meanMs;
  rlFailed = cold.failed + warm.failed;
  rlCreates = cold.creates + warm.creates;
  rlThrottled = cold.throttled + warm.throttled;
  console.log(`rl: mean batch makespan with warm pool ÷ without = ${prefetch.toFixed(3)}`);
}
const creates = (sweepFigures?.creates ?? 0) + rlCreates;
const throttled = (sweepFigures?.throttled ?? 0) + rlThrottled;
console.log(`${machineLoad()} at the end`);
console.log(
  `command: npm run bench:fleet -- --episodes ${N} --workers ${WORKERS} --concurrency ${CONCURRENCY} --cap ${CAP} --compress ${K} --steps ${STEPS} ` +
    `--per-minute ${PER_MINUTE} --batches ${BATCHES} --batch ${BATCH} --pause-s ${Number(values['pause-s'])} --scenario ${SCENARIO}`,
);
console.log(
  JSON.stringify({
    makespan_ratio: sweepFigures ? Number(sweepFigures.ratio.toFixed(3)) : null,
    prefetch_ratio: prefetch === null ? null : Number(prefetch.toFixed(3)),
    failed: (sweepFigures?.failed ?? 0) + rlFailed,
    throttled_ratio: Number((throttled / Math.max(1, creates)).toFixed(4)),
  }),
);
