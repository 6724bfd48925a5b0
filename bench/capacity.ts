/**
 * The measured inputs of the capacity model (docs/capacity.md), on emulated vefaas-local (no process per sandbox;
 * the worker speaks the same control-plane and SWE-ReX HTTP as to a real fleet) with `rollout-fleet worker` child
 * processes and a private redis-server (INFO is server-wide: nothing else may use it during the run).
 *
 * (1) cost: N replayed episodes (no grading) of K1 steps, then of K2 steps, each step answered after --step-ms
 *     (1 s by default: the worker batches a step's progress and log writes per second, so shorter steps coalesce
 *     and this is the per-step upper bound), each run bracketed by INFO snapshots:
 *     commands executed (INFO commandstats, commands inside Lua scripts included), Redis CPU (used_cpu_user +
 *     used_cpu_sys), network bytes in/out, the keys' MEMORY USAGE retained after the run, and the worker
 *     processes' CPU (utime + stime from /proc). The workers' idle traffic, measured first, is subtracted per
 *     second. Per step = slope between K1 and K2; per episode = the rest. A second run of each size under MONITOR
 *     splits the commands into client round trips and Lua-internal ones (MONITOR costs Redis CPU, so the first run
 *     gives the CPU figure).
 * (2) hold: one worker process at each concurrency C holds C episodes (their step's answer delayed by the gateway),
 *     measured over --hold-s once every sandbox is leased: worker RSS and CPU, Redis commands/s, CPU and the
 *     keys' MEMORY USAGE, each per held episode (the renewals, heartbeats and polls a long episode pays while it runs).
 * (3) reference: redis-benchmark against the same server (one thread, plain commands).
 *
 *   npm run bench:capacity -- [--episodes 200] [--steps 2,12] [--step-ms 1000] [--workers 2] [--concurrency 100]
 *                              [--idle-s 15] [--concurrencies 10,100,400] [--hold-s 30] [--scenario all|cost|hold|reference|results]
 *                              [--log-kb 16,120,600,2048] [--result-steps 30] [--step-out-kb 4]
 *
 * Last line: JSON of every measured input.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { parseArgs, promisify } from 'node:util';
import {
  EpisodeResultSchema,
  ResultStore,
  createKeyspace,
  createRedis,
  findRedis,
  freePort,
  type EpisodeResult,
  type RedisClient,
} from '@rollout-fleet/shared';
import { benchEpisode, openBenchFleet, type BenchFleet } from './lib/bench-fleet.js';
import { machineLoad, mean } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    episodes: { type: 'string', default: '200' },
    steps: { type: 'string', default: '2,12' },
    'step-ms': { type: 'string', default: '1000' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '100' },
    'idle-s': { type: 'string', default: '15' },
    concurrencies: { type: 'string', default: '10,100,400' },
    'hold-s': { type: 'string', default: '30' },
    scenario: { type: 'string', default: 'all' },
    'log-kb': { type: 'string', default: '16,120,600,2048' },
    'result-steps': { type: 'string', default: '30' },
    'step-out-kb': { type: 'string', default: '4' },
  },
});
const LOG_KB = values['log-kb'].split(',').map(Number);
const RESULT_STEPS = Number(values['result-steps']);
const STEP_OUT_KB = Number(values['step-out-kb']);
const N = Number(values.episodes);
const [K1, K2] = values.steps.split(',').map(Number) as [number, number];
const STEP_MS = Number(values['step-ms']);
const WORKERS = Number(values.workers);
const CONCURRENCY = Number(values.concurrency);
const IDLE_S = Number(values['idle-s']);
const CONCURRENCIES = values.concurrencies.split(',').map(Number);
const HOLD_S = Number(values['hold-s']);
const SCENARIO = values.scenario;
const run = (name: string): boolean => SCENARIO === 'all' || SCENARIO === name;
if (!(K2 > K1) || N <= 0)
  throw new Error('--steps takes two step counts, the second larger (e.g. 2,12); --episodes > 0');

// Caps far above the load: the benchmark measures costs, not the supply's pacing.
const LIMITS = {
  RF_FLEET_MAX_SANDBOXES: '5000',
  RF_FLEET_MAX_STARTING: '5000',
  RF_FLEET_CREATE_RATE: '2000',
  RF_FLEET_CREATE_BURST: '2000',
  RF_STRAGGLERS: 'false',
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const clockTicks = Number((await promisify(execFile)('getconf', ['CLK_TCK'])).stdout.trim());

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
async function processCpuS(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) / clockTicks;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0) / 1024;
}

interface Snapshot {
  at: number;
  /** command → calls (commandstats), without the benchmark's own INFO/MEMORY/CLIENT/CONFIG/XLEN. */
  calls: Map<string, number>;
  cpuS: number;
  netIn: number;
  netOut: number;
  usedMemory: number;
  workerCpuS: number;
}

/** The commands the benchmark itself sends to read stats (XLEN is its completion poll; nothing else uses it). */
const OWN_COMMANDS = /^(info|memory|client|config|xlen|scan|monitor|zcard|ping)/;

async function snapshot(stats: RedisClient, pids: number[]): Promise<Snapshot> {
  const text = String(await stats.call('INFO', 'commandstats', 'cpu', 'stats', 'memory'));
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? NaN);
  const calls = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!OWN_COMMANDS.test(m[1] as string)) calls.set(m[1] as string, Number(m[2]));
  }
  const cpus = await Promise.all(pids.map(processCpuS));
  return {
    at: performance.now(),
    calls,
    cpuS: field('used_cpu_user') + field('used_cpu_sys'),
    netIn: field('total_net_input_bytes'),
    netOut: field('total_net_output_bytes'),
    usedMemory: field('used_memory'),
    workerCpuS: cpus.reduce((a, b) => a + b, 0),
  };
}

interface Delta {
  seconds: number;
  calls: number;
  byCommand: Map<string, number>;
  cpuS: number;
  netIn: number;
  netOut: number;
  usedMemory: number;
  workerCpuS: number;
}

function delta(a: Snapshot, b: Snapshot): Delta {
  const byCommand = new Map<string, number>();
  for (const [name, calls] of b.calls) byCommand.set(name, calls - (a.calls.get(name) ?? 0));
  return {
    seconds: (b.at - a.at) / 1000,
    calls: [...byCommand.values()].reduce((x, y) => x + y, 0),
    byCommand,
    cpuS: b.cpuS - a.cpuS,
    netIn: b.netIn - a.netIn,
    netOut: b.netOut - a.netOut,
    usedMemory: b.usedMemory - a.usedMemory,
    workerCpuS: b.workerCpuS - a.workerCpuS,
  };
}

/** Bytes held by the fleet's keys (MEMORY USAGE of each, exact), with a breakdown by key family. */
async function keyBytes(
  stats: RedisClient,
  fleet: BenchFleet,
  runIds: string[],
): Promise<{ total: number; families: Map<string, number> }> {
  const prefix = fleet.config.queue.prefix;
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = (await stats.call('SCAN', cursor, 'COUNT', '1000')) as [string, string[]];
    cursor = next;
    keys.push(...batch.filter((k) => k.startsWith(`${prefix}:`) || k.startsWith(`rf:${prefix}:`)));
  } while (cursor !== '0');
  const pipeline = stats.pipeline();
  for (const key of keys) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
  const sizes = ((await pipeline.exec()) ?? []).map(([, size]) => Number(size ?? 0));
  const families = new Map<string, number>();
  let total = 0;
  keys.forEach((key, i) => {
    const size = sizes[i] ?? 0;
    total += size;
    let family = key.replace(`rf:${prefix}:`, 'rf:<prefix>:').replace(`${prefix}:`, '<prefix>:');
    for (const id of runIds) family = family.replaceAll(id, '<run>');
    family = family
      .replace(/e\d+/g, '<ep>')
      .replace(/\b\d+\b/g, '<n>')
      .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>');
    families.set(family, (families.get(family) ?? 0) + size);
  });
  return { total, families };
}

/** Counts client commands and Lua-internal ones under MONITOR, leaving out the stats connection's own. */
async function startMonitor(
  url: string,
  ownAddr: string,
): Promise<{ stop(): Promise<{ client: Map<string, number>; lua: Map<string, number> }> }> {
  const conn = createRedis(url);
  // The private server is a single one: MONITOR is a command of a server, not of a Cluster.
  if (!('monitor' in conn)) throw new Error('MONITOR needs a single Redis server');
  const monitor = await conn.monitor();
  const client = new Map<string, number>();
  const lua = new Map<string, number>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === ownAddr) return;
    const name = String(args[0]).toLowerCase();
    const into = source === 'lua' ? lua : client;
    into.set(name, (into.get(name) ?? 0) + 1);
  });
  return {
    async stop() {
      monitor.disconnect();
      conn.disconnect();
      return { client, lua };
    },
  };
}

const sum = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);
const top = (m: Map<string, number>, n: number, per = 1): string =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${k} ${(v / per).toFixed(1)}`)
    .join(', ');
const fixed = (x: number, d = 1): number => Number(x.toFixed(d));

const ownRedis = await findRedis(undefined, `redis://127.0.0.1:${await freePort()}`); // nothing answers there: spawns one
const stats = createRedis(ownRedis.url);
const ownAddr = /addr=(\S+)/.exec(String(await stats.call('CLIENT', 'INFO')))?.[1] ?? '';
const measured: Record<string, unknown> = {};
console.log(
  `private redis-server at ${ownRedis.url} (${String(/redis_version:(\S+)/.exec(String(await stats.call('INFO', 'server')))?.[1])}); ${machineLoad()}`,
);

interface Cost {
  steps: number;
  calls: number;
  clientCalls: number;
  luaCalls: number;
  scripts: number;
  cpuMs: number;
  netIn: number;
  netOut: number;
  retained: number;
  workerCpuMs: number;
}

async function costScenario(): Promise<void> {
  const fleet = await openBenchFleet({
    isolation: 'emulated',
    redisUrl: ownRedis.url,
    env: LIMITS,
    host: { faults: { gateway: { latencyMs: { '/run_in_session': { min: STEP_MS, max: STEP_MS } } } } },
  });
  try {
    await fleet.startWorkers({ count: WORKERS, concurrency: CONCURRENCY, processes: true });
    const pids = fleet.workerPids();
    // Idle: what W listening workers cost Redis per second with nothing to do.
    const idleA = await snapshot(stats, pids);
    await sleep(IDLE_S * 1000);
    const idle = delta(idleA, await snapshot(stats, pids));
    const idlePerS = {
      calls: idle.calls / idle.seconds,
      cpuS: idle.cpuS / idle.seconds,
      netIn: idle.netIn / idle.seconds,
      netOut: idle.netOut / idle.seconds,
      workerCpuS: idle.workerCpuS / idle.seconds,
    };
    console.log(
      `\n(1) cost: ${WORKERS} worker processes × concurrency ${CONCURRENCY}, ${N} episodes per run, emulated sandboxes, every run_in_session answered after ${STEP_MS} ms`,
    );
    console.log(
      `  idle (${idle.seconds.toFixed(1)} s, ${WORKERS} workers): ${(idlePerS.calls / WORKERS).toFixed(1)} commands/s per worker process (${top(idle.byCommand, 6, idle.seconds)} /s in all), Redis CPU ${((idlePerS.cpuS / WORKERS) * 1000).toFixed(2)} ms/s per worker, worker CPU ${((idlePerS.workerCpuS / WORKERS) * 1000).toFixed(1)} ms/s each`,
    );
    measured.idle_per_worker = {
      commands_per_s: fixed(idlePerS.calls / WORKERS),
      redis_cpu_ms_per_s: fixed((idlePerS.cpuS / WORKERS) * 1000, 2),
      worker_cpu_ms_per_s: fixed((idlePerS.workerCpuS / WORKERS) * 1000),
    };

    const runIds: string[] = [];
    const costs: Cost[] = [];
    for (const steps of [K1, K2]) {
      const split = { client: 0, lua: 0, scripts: 0 };
      let first: Omit<Cost, 'clientCalls' | 'luaCalls' | 'scripts'> | undefined;
      for (const monitored of [false, true]) {
        const runId = `capacity-${steps}-${monitored ? 'm' : 'p'}-${Date.now()}`;
        runIds.push(runId);
        const episodes = Array.from({ length: N }, (_, i) => benchEpisode({ runId, episodeId: `e${i}`, steps }));
        const bytesBefore = monitored ? 0 : (await keyBytes(stats, fleet, runIds)).total;
        const monitor = monitored ? await startMonitor(ownRedis.url, ownAddr) : undefined;
        const a = await snapshot(stats, pids);
        await fleet.submit({ runId, episodes });
        const deadline = Date.now() + 600_000;
        while (Number(await stats.xlen(fleet.keys.results(runId))) < N) {
          if (Date.now() > deadline) throw new Error(`run ${runId} did not finish within 600 s`);
          await sleep(100);
        }
        const d = delta(a, await snapshot(stats, pids));
        const counted = await monitor?.stop();
        const failed = Number(await stats.hget(fleet.keys.run(runId), 'failed'));
        const less = (x: number, perS: number): number => (x - perS * d.seconds) / N;
        if (!monitored) {
          const after = await keyBytes(stats, fleet, runIds);
          first = {
            steps,
            calls: less(d.calls, idlePerS.calls),
            cpuMs: less(d.cpuS, idlePerS.cpuS) * 1000,
            netIn: less(d.netIn, idlePerS.netIn),
            netOut: less(d.netOut, idlePerS.netOut),
            retained: (after.total - bytesBefore) / N,
            workerCpuMs: less(d.workerCpuS, idlePerS.workerCpuS) * 1000,
          };
          console.log(
            `  ${steps}-step episodes: ${N} in ${d.seconds.toFixed(1)} s (${(N / d.seconds).toFixed(1)}/s), ${failed} failed; per episode: ${first.calls.toFixed(0)} commands (${top(d.byCommand, 8, N)}), Redis CPU ${first.cpuMs.toFixed(2)} ms, net ${(first.netIn / 1024).toFixed(1)} KiB in / ${(first.netOut / 1024).toFixed(1)} KiB out, retained ${(first.retained / 1024).toFixed(1)} KiB, worker CPU ${first.workerCpuMs.toFixed(1)} ms; ${machineLoad()}`,
          );
          if (steps === K2) {
            console.log(
              `    retained after both ${steps}-step runs, by key family (bytes per episode over all ${runIds.length} runs so far):`,
            );
            for (const [family, bytes] of [...after.families].sort((x, y) => y[1] - x[1]).slice(0, 10)) {
              console.log(`      ${family}  ${(bytes / (N * runIds.length)).toFixed(0)}`);
            }
          }
        } else if (counted) {
          // MONITOR sees what clients send and what scripts call; idle traffic is small next to a run (see above).
          split.client = sum(counted.client) / N;
          split.lua = sum(counted.lua) / N;
          split.scripts = ((counted.client.get('evalsha') ?? 0) + (counted.client.get('eval') ?? 0)) / N;
          console.log(
            `    under MONITOR (${d.seconds.toFixed(1)} s): per episode ${split.client.toFixed(0)} client commands (${top(counted.client, 6, N)}) of which ${split.scripts.toFixed(1)} Lua scripts running ${split.lua.toFixed(0)} commands inside (${top(counted.lua, 6, N)})`,
          );
        }
        if (failed > 0) process.exitCode = 1;
      }
      if (first) costs.push({ ...first, clientCalls: split.client, luaCalls: split.lua, scripts: split.scripts });
    }
    const [c1, c2] = costs as [Cost, Cost];
    const slope = (f: (c: Cost) => number): number => (f(c2) - f(c1)) / (K2 - K1);
    const base = (f: (c: Cost) => number): number => f(c1) - K1 * slope(f);
    const fields: Array<[string, (c: Cost) => number, number]> = [
      ['commands', (c) => c.calls, 1],
      ['client_commands', (c) => c.clientCalls, 1],
      ['lua_scripts', (c) => c.scripts, 2],
      ['redis_cpu_ms', (c) => c.cpuMs, 3],
      ['net_in_bytes', (c) => c.netIn, 0],
      ['net_out_bytes', (c) => c.netOut, 0],
      ['retained_bytes', (c) => c.retained, 0],
      ['worker_cpu_ms', (c) => c.workerCpuMs, 2],
    ];
    const perEpisode: Record<string, number> = {};
    const perStep: Record<string, number> = {};
    for (const [name, f, d] of fields) {
      perEpisode[name] = fixed(base(f), d);
      perStep[name] = fixed(slope(f), d);
    }
    console.log(`  ⇒ per episode (fixed): ${JSON.stringify(perEpisode)}`);
    console.log(`  ⇒ per step:            ${JSON.stringify(perStep)}`);
    measured.per_episode = perEpisode;
    measured.per_step = perStep;
  } finally {
    await fleet.close();
  }
}

async function holdScenario(): Promise<void> {
  console.log(`\n(2) hold: one worker process holding C episodes for ${HOLD_S} s (each blocked in its step)`);
  const rows: Array<{
    c: number;
    idleRss: number;
    meanRss: number;
    rss: number;
    workerCpu: number;
    calls: number;
    redisCpu: number;
    redisMem: number;
  }> = [];
  for (const c of CONCURRENCIES) {
    const fleet = await openBenchFleet({
      isolation: 'emulated',
      redisUrl: ownRedis.url,
      env: LIMITS,
      // The step's answer comes after the window: every episode holds its sandbox, lease and job lock throughout.
      host: {
        faults: {
          gateway: { latencyMs: { '/run_in_session': { min: (HOLD_S + 600) * 1000, max: (HOLD_S + 600) * 1000 } } },
        },
      },
    });
    try {
      await fleet.startWorkers({ count: 1, concurrency: c, processes: true });
      const pids = fleet.workerPids();
      const pid = pids[0] as number;
      const idleA = await snapshot(stats, pids);
      await sleep(5000);
      const idle = delta(idleA, await snapshot(stats, pids));
      const idleRss = await rssMb(pid);
      const runIds = [`capacity-hold-${c}-${Date.now()}`];
      const bytesBefore = (await keyBytes(stats, fleet, runIds)).total;
      const runId = runIds[0] as string;
      await fleet.submit({
        runId,
        episodes: Array.from({ length: c }, (_, i) => benchEpisode({ runId, episodeId: `e${i}`, steps: 1 })),
      });
      const deadline = Date.now() + 300_000;
      while (Number(await stats.zcard(fleet.keys.leases())) < c || fleet.host.liveSandboxes() < c) {
        if (Date.now() > deadline)
          throw new Error(
            `only ${await stats.zcard(fleet.keys.leases())} of ${c} episodes leased a sandbox within 300 s`,
          );
        await sleep(200);
      }
      // Let the last starts settle (session, tool upload) before the window opens.
      await sleep(3000);
      const a = await snapshot(stats, pids);
      const rss: number[] = [];
      while (performance.now() - a.at < HOLD_S * 1000) {
        rss.push(await rssMb(pid));
        await sleep(500);
      }
      const d = delta(a, await snapshot(stats, pids));
      const held = await keyBytes(stats, fleet, runIds);
      const perS = (x: number, idleX: number): number => (x / d.seconds - idleX / idle.seconds) / c;
      const row = {
        c,
        idleRss,
        meanRss: mean(rss),
        rss: (mean(rss) - idleRss) / c,
        workerCpu: perS(d.workerCpuS, idle.workerCpuS) * 1000,
        calls: perS(d.calls, idle.calls),
        redisCpu: perS(d.cpuS, idle.cpuS) * 1000,
        redisMem: (held.total - bytesBefore) / c,
      };
      rows.push(row);
      console.log(
        `  C=${c}: worker RSS ${idleRss.toFixed(0)} MB idle → ${mean(rss).toFixed(0)} MB mean (max ${Math.max(...rss).toFixed(0)}) = ${row.rss.toFixed(3)} MB per held episode; ` +
          `worker CPU ${row.workerCpu.toFixed(2)} ms/s per episode; Redis ${row.calls.toFixed(3)} commands/s per episode (${top(d.byCommand, 6, d.seconds)} /s in all), ` +
          `Redis CPU ${(row.redisCpu * 1000).toFixed(1)} µs/s per episode, keys +${(row.redisMem / 1024).toFixed(1)} KiB per episode (MEMORY USAGE); ${machineLoad()}`,
      );
    } finally {
      await fleet.close();
    }
  }
  // The heap's idle size moves with garbage collection by tens of MB: the slope between concurrencies is the
  // steadier figure of memory per held episode.
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [rows[i - 1]!, rows[i]!];
    console.log(
      `  worker RSS slope C=${a.c} → ${b.c}: ${((b.meanRss - a.meanRss) / (b.c - a.c)).toFixed(3)} MB per held episode`,
    );
  }
  measured.hold = rows.map((r) => ({
    concurrency: r.c,
    worker_rss_mb_idle: Math.round(r.idleRss),
    worker_rss_mb_mean: Math.round(r.meanRss),
    worker_rss_mb_per_episode: fixed(r.rss, 3),
    worker_cpu_ms_per_s: fixed(r.workerCpu, 3),
    redis_commands_per_s: fixed(r.calls, 3),
    redis_cpu_ms_per_s: fixed(r.redisCpu, 4),
    redis_bytes: Math.round(r.redisMem),
  }));
}

/** A deterministic stream of numbers in [0, 1), so every run measures the same text. */
function seeded(seed: number): () => number {
  // mulberry32: 32-bit integer arithmetic (a float LCG loses bits and falls into a short cycle).
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Test and module names: 400 made-up words of 1–4 syllables (seeded), so the text is about as repetitive as a real
 * suite's names — not a dozen words over and over, which would flatter compression.
 */
const WORDS = ((): string[] => {
  const rand = seeded(7);
  const syllables = [
    're',
    'ad',
    'da',
    'ta',
    'set',
    'el',
    'em',
    'ent',
    'seq',
    'ue',
    'ch',
    'ar',
    'pix',
    'tag',
    'val',
    'pri',
    'vate',
    'fi',
    'le',
    'me',
    'to',
    'co',
    'de',
    'ex',
    'im',
    'plic',
    'it',
    'vr',
    'uid',
    'jpe',
    'g',
    'rle',
    'lut',
    'win',
  ];
  return Array.from({ length: 400 }, () =>
    Array.from({ length: 1 + Math.floor(rand() * 4) }, () => syllables[Math.floor(rand() * syllables.length)]).join(''),
  );
})();

/**
 * An eval log of about `bytes` like pydicom's under `pytest -rA` (92–137 KB for real instances): the eval script's
 * `set -x` lines, pytest's progress lines, a traceback now and then, and the `-rA` summary of one line per test —
 * test names drawn from a small vocabulary with numbered parameters, as real suites are.
 */
function evalLog(bytes: number, rand: () => number): string {
  const pick = (): string => WORDS[Math.floor(rand() * WORDS.length)] as string;
  const parts = [
    "+ source /opt/miniconda3/bin/activate\n+ conda activate testbed\n+ cd /testbed\n+ : '>>>>> Start Test Output'\n",
    '+ pytest -rA pydicom/tests/test_filereader.py pydicom/tests/test_dataset.py\n',
    '============================= test session starts ==============================\n',
    'platform linux -- Python 3.9.19, pytest-8.3.2, pluggy-1.5.0\nrootdir: /testbed\ncollected 2417 items\n\n',
  ];
  let size = parts.join('').length;
  const push = (line: string): void => {
    parts.push(line);
    size += line.length;
  };
  while (size < bytes * 0.3) {
    const dots = Array.from({ length: 60 }, () => (rand() < 0.03 ? 's' : rand() < 0.01 ? 'F' : '.')).join('');
    push(`pydicom/tests/test_${pick()}_${pick()}.py ${dots} [${String(Math.floor(rand() * 100)).padStart(3)}%]\n`);
    if (rand() < 0.05) {
      push(
        `    def test_${pick()}_${Math.floor(rand() * 1000)}(self):\n>       assert ds.${pick()}.${pick()} == ${Math.floor(rand() * 65536)}\n`,
      );
      push(
        `E       AssertionError: assert 0x${Math.floor(rand() * 2 ** 32).toString(16)} == ${Math.floor(rand() * 65536)}\n`,
      );
    }
  }
  push('=========================== short test summary info ============================\n');
  while (size < bytes) {
    const status = rand() < 0.95 ? 'PASSED' : rand() < 0.5 ? 'SKIPPED' : 'FAILED';
    push(
      `${status} pydicom/tests/test_${pick()}.py::Test${pick()}${pick()}::test_${pick()}_${pick()}[${Math.floor(rand() * 5000)}-${pick()}]\n`,
    );
  }
  push("+ : '>>>>> End Test Output'\n");
  return parts.join('');
}

/** The cut every stored text had before: head + marker + tail past `limit` bytes (ASCII text here). */
function cut(text: string, limit: number): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  const half = Math.floor(limit / 2);
  const marker = `\n[... output truncated: ${text.length} bytes in total, ${text.length - 2 * half} bytes omitted ...]\n`;
  return { text: text.slice(0, half) + marker + text.slice(-half), truncated: true };
}

function gradedResult(o: {
  runId: string;
  episodeId: string;
  log: string;
  logLimit: number;
  steps: string[];
}): EpisodeResult {
  const log = cut(o.log, o.logLimit);
  const now = new Date().toISOString();
  return EpisodeResultSchema.parse({
    run_id: o.runId,
    episode_id: o.episodeId,
    instance_id: 'pydicom__pydicom-1694',
    sample_index: 0,
    status: 'completed',
    resolved: true,
    reward: 1,
    steps: o.steps.map((output, index) => {
      const kept = cut(output, o.logLimit);
      return {
        index,
        tool: 'str_replace_editor',
        args: { command: 'view', path: `/testbed/pydicom/module_${index}.py` },
        output: kept.text,
        output_bytes: output.length,
        truncated: kept.truncated,
        exit_code: 0,
        duration_ms: 120,
        timed_out: false,
      };
    }),
    patch:
      'diff --git a/pydicom/dataset.py b/pydicom/dataset.py\n--- a/pydicom/dataset.py\n+++ b/pydicom/dataset.py\n@@ -1 +1 @@\n-x\n+y\n',
    report: { patch_is_None: false, patch_exists: true, patch_successfully_applied: true, resolved: true },
    grading: {
      parser: 'pytest_options',
      parser_source: 'repository',
      tests_ran: true,
      timed_out: false,
      tests_parsed: 2417,
      tests: [],
      problem: null,
      log: log.text,
      log_bytes: o.log.length,
      log_truncated: log.truncated,
    },
    timings: { queue_wait_ms: 1, sandbox_acquire_ms: 1, replay_ms: 1, grade_ms: 1, total_ms: 4 },
    attempts: [],
    failure: null,
    worker_id: 'bench',
    sandbox_id: null,
    finished_at: now,
  });
}

/**
 * (4) results: the Redis memory one graded episode's result takes, before (plain JSON, every output and the eval
 * log cut to 64 KiB) and after (stored compressed, each output whole up to 1 MiB), side by side in one run, for eval
 * logs of several sizes and --result-steps steps of --step-out-kb each.
 */
async function resultsScenario(): Promise<void> {
  const keys = createKeyspace(`{bench-results-${Date.now()}}`);
  const variants = [
    { name: 'before', store: new ResultStore(stats, keys, { compress: false }), limit: 64 * 1024 },
    { name: 'after', store: new ResultStore(stats, keys), limit: 1024 * 1024 },
  ];
  const rand = seeded(29);
  const steps = Array.from({ length: RESULT_STEPS }, () => evalLog(STEP_OUT_KB * 1024, rand));
  console.log(
    `\n(4) results: one graded result per row (a pydicom-like pytest eval log, ${RESULT_STEPS} steps of ${STEP_OUT_KB} KB), MEMORY USAGE of its key`,
  );
  console.log('  eval log | before: kept, bytes in Redis | after: kept, bytes in Redis | ratio | encode ms');
  const rows: Array<Record<string, number>> = [];
  for (const kb of LOG_KB) {
    const log = evalLog(kb * 1024, rand);
    const row: Record<string, number> = { log_kb: kb };
    for (const v of variants) {
      const runId = `results-${v.name}-${kb}`;
      const result = gradedResult({ runId, episodeId: 'e0', log, logLimit: v.limit, steps });
      const started = performance.now();
      await v.store.commit(result);
      row[`${v.name}_commit_ms`] = fixed(performance.now() - started, 1);
      row[`${v.name}_log_kept_bytes`] = result.grading?.log.length ?? 0;
      row[`${v.name}_redis_bytes`] = Number(
        await stats.call('MEMORY', 'USAGE', keys.result(runId, 'e0', 0), 'SAMPLES', '0'),
      );
    }
    rows.push(row);
    const kib = (n: number | undefined): string => `${((n ?? 0) / 1024).toFixed(0)} KiB`;
    console.log(
      `  ${String(kb).padStart(5)} KB | ${kib(row.before_log_kept_bytes).padStart(8)} kept, ${kib(row.before_redis_bytes).padStart(8)} | ` +
        `${kib(row.after_log_kept_bytes).padStart(8)} kept, ${kib(row.after_redis_bytes).padStart(8)} | ` +
        `${((row.before_redis_bytes ?? 0) / (row.after_redis_bytes ?? 1)).toFixed(2)}× | ${row.after_commit_ms}`,
    );
  }
  measured.result_memory = rows;
}

async function referenceScenario(): Promise<void> {
  const port = new URL(ownRedis.url).port;
  const args = ['-h', '127.0.0.1', '-p', port, '-q', '-n', '200000', '-c', '50', '-t', 'set,get,incr,hset,zadd,lpush'];
  const out = (await promisify(execFile)('redis-benchmark', args)).stdout;
  const rps = [...out.matchAll(/^(\S+):\s+([\d.]+) requests per second/gm)].map(
    (m) => [m[1] as string, Number(m[2])] as const,
  );
  const pipelined = (await promisify(execFile)('redis-benchmark', [...args.slice(0, -2), '-t', 'set', '-P', '16']))
    .stdout;
  const rpsP = Number(/([\d.]+) requests per second/.exec(pipelined)?.[1]);
  console.log(
    `\n(3) reference: redis-benchmark ${args.join(' ')}\n  ${rps.map(([k, v]) => `${k} ${Math.round(v)}/s`).join(', ')}; SET with -P 16: ${Math.round(rpsP)}/s; ${machineLoad()}`,
  );
  measured.redis_benchmark = {
    ...Object.fromEntries(rps.map(([k, v]) => [k.toLowerCase(), Math.round(v)])),
    set_pipelined_16: Math.round(rpsP),
  };
}

try {
  if (run('cost')) await costScenario();
  if (run('hold')) await holdScenario();
  if (run('reference')) await referenceScenario();
  if (run('results')) await resultsScenario();
} finally {
  stats.disconnect();
  await ownRedis.close();
}
console.log(
  `\ncommand: npm run bench:capacity -- --episodes ${N} --steps ${K1},${K2} --step-ms ${STEP_MS} --workers ${WORKERS} --concurrency ${CONCURRENCY} --idle-s ${IDLE_S} --concurrencies ${CONCURRENCIES.join(',')} --hold-s ${HOLD_S} --scenario ${SCENARIO} --log-kb ${LOG_KB.join(',')} --result-steps ${RESULT_STEPS} --step-out-kb ${STEP_OUT_KB}`,
);
console.log(JSON.stringify(measured));
// vefaas-local keeps the timers of answers it was told to delay (the hold scenario's) after close(): end here.
process.exit();
