/**
 * The chaos sweep: every fault at once, then the invariants. Used by `npm run chaos` (bench/chaos.ts, hundreds of
 * episodes) and by its CI-sized variant (test/chaos.e2e.test.ts, a few dozen).
 *
 * Parts, all real and each a process of its own whose stdout and stderr are read line by line:
 * - a `redis-server` of its own with AOF fsynced on every write (aof-redis.ts), restarted once gracefully
 *   (SHUTDOWN) and once after SIGKILL while the sweep runs;
 * - `rollout-fleet sandbox-host` (vefaas-local, bubblewrap sandboxes from examples/images) with seeded faults:
 *   control-plane 5xx, gateway 502s, instances that die under a command, CreateSandbox throttling (a token
 *   bucket slower than the fleet's own create rate) and cold-start timeouts;
 * - several `rollout-fleet worker` processes, some SIGKILLed mid-run and replaced (as a supervisor would).
 * The examples (examples/sweep.jsonl × samples) carry their expected outcomes (examples/expected.json).
 * Planted secrets — the gateway key, the AK/SK pair, a value in every episode's sandbox env — must appear in no
 * line any process writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import {
  ERROR_CODES,
  ResultStore,
  createKeyspace,
  createRedis,
  isErrorCode,
  type Episode,
  type EpisodeJobData,
  type EpisodeResult,
  type RedisClient,
} from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import type { FaultConfig } from '@rollout-fleet/vefaas-local';
import { startAofRedis, type AofRedis } from './aof-redis.js';
import { SecretWatch, type SecretHit } from './secret-watch.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CLI = `${root}bin/rollout-fleet.js`;
const RUN_ID = 'chaos';
/** Short liveness so the sweep sees takeovers and the reaper within seconds, not minutes. */
const LEASE_TTL_S = 8;
const REAPER_INTERVAL_S = 2;
/** How long Redis stays down at each restart. */
const REDIS_DOWN_MS = 1500;

export interface ChaosOptions {
  /** Samples per example (examples/sweep.jsonl has 6 examples). */
  samples: number;
  /** Worker processes running at any time. */
  workers: number;
  /** Episodes at once per worker. */
  concurrency: number;
  /** Workers SIGKILLed (and replaced) during the sweep. */
  workerKills: number;
  /** Seed of the fault dice and of the choice of victims. */
  seed: number;
  /** Give up waiting for results after this long. */
  timeoutMs: number;
  /** Called with one line at each event and every few seconds. */
  progress?: (line: string) => void;
}

export interface Invariant {
  name: string;
  /** What was counted (e.g. results, duplicates, mismatches). */
  count: number;
  /** What it must be. */
  expected: number;
  ok: boolean;
}

export interface ChaosReport {
  episodes: number;
  results: number;
  complete: boolean;
  seconds: number;
  faults: Record<string, number>;
  workerSigkills: number;
  redisRestarts: { graceful: number; sigkill: number };
  outcomes: { resolved: number; unresolved: number; failed: number };
  /** Failure codes of failed results, and of every failed attempt (retried or not). */
  failedByCode: Record<string, number>;
  attemptFailuresByCode: Record<string, number>;
  mismatches: string[];
  unclassified: string[];
  duplicates: number;
  sandboxesAlive: Array<{ id: string; status: string }>;
  secretHits: SecretHit[];
  logLines: number;
  invariants: Invariant[];
  ok: boolean;
}

/** The seeded platform faults of the sweep (vefaas-local's fault config). */
export function chaosFaults(seed: number): FaultConfig {
  return {
    seed,
    controlPlane: { errorRate: 0.03 },
    gateway: { errorRate: 0.02, instanceDeathRate: { '/run_in_session': 0.006 } },
    // Slower than the fleet's own create rate (RF_FLEET_CREATE_RATE 8/s): the platform throttles.
    throttle: { ratePerSecond: 4, burst: 4 },
    coldStart: { timeoutRate: 0.03 },
  };
}

interface Host {
  child: ChildProcess;
  endpoint: string;
  functionId: string;
  route: string;
}

function secret(label: string): string {
  return `${label}${randomBytes(12).toString('hex')}`;
}

async function startSandboxHost(o: {
  faultsFile: string;
  accessKey: string;
  secretKey: string;
  gatewayKey: string;
  watch: SecretWatch;
}): Promise<Host> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'sandbox-host',
      '--port',
      '0',
      '--images',
      `${root}examples/images`,
      '--access-key',
      o.accessKey,
      '--secret-key',
      o.secretKey,
      '--gateway-key',
      o.gatewayKey,
      '--faults',
      o.faultsFile,
      '--log-level',
      'debug',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  o.watch.watch('sandbox-host', 'stdout', child.stdout);
  o.watch.watch('sandbox-host', 'stderr', child.stderr);
  // The banner (stdout) ends with the health line: everything needed is printed by then.
  const banner = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('health: ')) resolve(text);
    });
    child.once('exit', (code) =>
      reject(new Error(`sandbox-host exited (${String(code)}): ${o.watch.tail('sandbox-host', 'stderr')}`)),
    );
  });
  const field = (name: string): string => {
    const value = new RegExp(`${name}=(\\S+)`).exec(banner)?.[1];
    if (value === undefined) throw new Error(`sandbox-host banner has no ${name}: ${banner}`);
    return value;
  };
  return {
    child,
    endpoint: field('VEFAAS_ENDPOINT'),
    functionId: field('VEFAAS_FUNCTION_ID'),
    route: field('VEFAAS_FUNCTION_ROUTE'),
  };
}

async function adminJson<T>(host: Host, path: string): Promise<T> {
  const response = await fetch(`${host.endpoint}/_admin/${path}`);
  if (!response.ok) throw new Error(`GET /_admin/${path}: ${response.status}`);
  return (await response.json()) as T;
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

function tally(codes: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const code of codes) out[code] = (out[code] ?? 0) + 1;
  return out;
}

/** The examples × samples, each with a planted secret in its sandbox env. */
async function sweepEpisodes(samples: number, envSecret: string): Promise<Episode[]> {
  const path = `${root}examples/sweep.jsonl`;
  const validated = validateInputs([{ path, text: await readFile(path, 'utf8') }], { runId: RUN_ID, samples });
  if (validated.problems.length > 0)
    throw new Error(`examples/sweep.jsonl is invalid: ${validated.problems[0]!.message}`);
  return validated.episodes.map((e) => ({
    ...e,
    sandbox: { ...e.sandbox, env: { ...e.sandbox.env, CHAOS_EPISODE_TOKEN: envSecret } },
  }));
}

export async function runChaosSweep(o: ChaosOptions): Promise<ChaosReport> {
  const say = o.progress ?? ((): void => undefined);
  const started = performance.now();
  const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(0)}s`;
  const secrets = {
    'gateway key': secret('gwkey-'),
    'access key id': secret('AKLTchaos'),
    'secret access key': secret('sk-'),
    'episode env value': secret('envtok-'),
  };
  // The host's banner prints the access key id on purpose (an identifier the operator copies into the workers'
  // configuration; the secret key is printed only when generated). Nothing else may show it.
  const watch = new SecretWatch(secrets, [
    { process: /^sandbox-host$/, stream: 'stdout', line: /^\s*VEFAAS_ACCESS_KEY=/, secret: 'access key id' },
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'rf-chaos-'));
  const faultsFile = join(dir, 'faults.json');
  await writeFile(faultsFile, JSON.stringify(chaosFaults(o.seed)));

  let redisServer: AofRedis | undefined;
  let host: Host | undefined;
  let redis: RedisClient | undefined;
  let queue: Queue<EpisodeJobData> | undefined;
  let queueConnection: RedisClient | undefined;
  const workers = new Set<ChildProcess>();
  let workerSeq = 0;
  let sigkills = 0;
  const restarts = { graceful: 0, sigkill: 0 };
  let state = o.seed || 1;
  const random = (): number => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

  try {
    redisServer = await startAofRedis();
    say(`redis      ${redisServer.url} (own redis-server, appendonly yes, appendfsync always)`);
    host = await startSandboxHost({
      faultsFile,
      accessKey: secrets['access key id'],
      secretKey: secrets['secret access key'],
      gatewayKey: secrets['gateway key'],
      watch,
    });
    say(`vefaas     ${host.endpoint} (sandbox-host, bwrap sandboxes, faults ${JSON.stringify(chaosFaults(o.seed))})`);
    const prefix = '{rf-chaos}';
    const keys = createKeyspace(prefix);
    redis = createRedis(redisServer.url);
    // Our own polling must ride out the Redis restarts like the workers do, not crash the sweep.
    redis.on('error', () => undefined);
    queueConnection = redis.duplicate();
    queueConnection.on('error', () => undefined);
    queue = new Queue<EpisodeJobData>('episodes', { connection: queueConnection, prefix });
    queue.on('error', () => undefined);

    const workerEnv: NodeJS.ProcessEnv = {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(RF_|VEFAAS_|VOLCE|REDIS_URL|LOG_)/.test(name)),
      ),
      REDIS_URL: redisServer.url,
      RF_PREFIX: prefix,
      RF_WORKER_CONCURRENCY: String(o.concurrency),
      VEFAAS_ENDPOINT: host.endpoint,
      VEFAAS_FUNCTION_ROUTE: host.route,
      VEFAAS_FUNCTION_ID: host.functionId,
      VEFAAS_ACCESS_KEY: secrets['access key id'],
      VEFAAS_SECRET_KEY: secrets['secret access key'],
      VEFAAS_GATEWAY_KEY: secrets['gateway key'],
      RF_LEASE_TTL_S: String(LEASE_TTL_S),
      RF_REAPER_INTERVAL_S: String(REAPER_INTERVAL_S),
      RF_LOCK_DURATION_MS: '10000',
      RF_STALLED_INTERVAL_MS: '5000',
      RF_SHUTDOWN_GRACE_S: '5',
      // Debug: every line a process can write is searched for the planted secrets, not only the usual ones.
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
    };
    const spawnWorker = (): void => {
      const name = `worker-${++workerSeq}`;
      const child = spawn(process.execPath, [CLI, 'worker'], {
        cwd: root,
        env: workerEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      watch.watch(name, 'stdout', child.stdout);
      watch.watch(name, 'stderr', child.stderr);
      workers.add(child);
      child.once('exit', () => workers.delete(child));
    };

    const episodes = await sweepEpisodes(o.samples, secrets['episode env value']);
    const summary = await submitRun({
      queue,
      redis,
      keys,
      runId: RUN_ID,
      episodes,
      policy: { attempts: 4, backoffMs: 500, retentionS: 3600 },
    });
    say(
      `submitted  ${summary.enqueued} episodes (examples/sweep.jsonl × ${o.samples} samples), each with a secret in its sandbox env`,
    );
    for (let i = 0; i < o.workers; i++) spawnWorker();
    say(`workers    ${o.workers} rollout-fleet worker processes × ${o.concurrency} episodes`);

    // The chaos schedule, by progress (results / episodes): worker SIGKILLs spread over the run, a graceful
    // Redis restart at a third, a SIGKILLed one at two thirds.
    type Event = { at: number; what: 'kill-worker' | 'redis-graceful' | 'redis-sigkill' };
    const events: Event[] = [
      ...Array.from({ length: o.workerKills }, (_, i): Event => ({
        at: (i + 1) / (o.workerKills + 1) - 0.05,
        what: 'kill-worker',
      })),
      { at: 0.33, what: 'redis-graceful' } as const,
      { at: 0.66, what: 'redis-sigkill' } as const,
    ].sort((a, b) => a.at - b.at);

    const total = episodes.length;
    let done = 0;
    let lastLine = 0;
    const deadline = Date.now() + o.timeoutMs;
    const faultsNow = async (): Promise<Record<string, number>> =>
      (await adminJson<{ stats: Record<string, number> }>(host!, 'faults')).stats;
    for (;;) {
      try {
        const [doneField] = await redis.hmget(keys.run(RUN_ID), 'done');
        done = Number(doneField ?? 0);
        if (done >= total) {
          const counts = await queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized', 'waiting-children');
          if (Object.values(counts).every((n) => n === 0)) break;
        }
      } catch {
        // Redis is restarting: the next poll will tell.
      }
      while (events.length > 0 && done / total >= events[0]!.at) {
        const event = events.shift()!;
        if (event.what === 'kill-worker') {
          const victims = [...workers];
          const victim = victims[Math.floor(random() * victims.length)];
          if (victim) {
            await stopChild(victim, 'SIGKILL');
            sigkills += 1;
            spawnWorker();
            say(`chaos      [${elapsed()}] SIGKILL worker pid ${victim.pid} at ${done}/${total}; a replacement starts`);
          }
        } else if (event.what === 'redis-graceful') {
          say(`chaos      [${elapsed()}] Redis SHUTDOWN at ${done}/${total}, down ${REDIS_DOWN_MS} ms`);
          await redisServer.restartGracefully(REDIS_DOWN_MS);
          restarts.graceful += 1;
        } else {
          say(`chaos      [${elapsed()}] Redis SIGKILL at ${done}/${total}, down ${REDIS_DOWN_MS} ms`);
          await redisServer.restartAfterKill(REDIS_DOWN_MS);
          restarts.sigkill += 1;
        }
      }
      if (Date.now() - lastLine >= 5000) {
        lastLine = Date.now();
        const f = await faultsNow().catch(() => ({}) as Record<string, number>);
        say(
          `progress   [${elapsed()}] ${done}/${total} results · workers ${workers.size} · faults cp5xx ${f.controlPlaneErrors ?? '?'} gw502 ${f.gatewayErrors ?? '?'} deaths ${f.instanceDeaths ?? '?'} throttled ${f.throttled ?? '?'} cold-start ${f.coldStartTimeouts ?? '?'}`,
        );
      }
      if (Date.now() > deadline) {
        say(`timeout    [${elapsed()}] ${done}/${total} results after ${o.timeoutMs / 1000}s`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const complete = done >= total;
    const seconds = (performance.now() - started) / 1000;
    const faults = await faultsNow();

    // Leftovers: whatever the killed workers held must be gone once their leases expired and a reaper ran.
    say(
      `settling   [${elapsed()}] waiting out the lease TTL (${LEASE_TTL_S}s) and the reaper (${REAPER_INTERVAL_S}s) for leftover sandboxes`,
    );
    type Listed = { sandboxes: Array<{ id: string; status: string }> };
    const platform = host;
    const alive = async (): Promise<Array<{ id: string; status: string }>> =>
      (await adminJson<Listed>(platform, 'sandboxes')).sandboxes
        .filter((s) => s.status !== 'Failed')
        .map((s) => ({ id: s.id, status: s.status }));
    const settleBy = Date.now() + (LEASE_TTL_S + 3 * REAPER_INTERVAL_S + 10) * 1000;
    let sandboxesAlive = await alive();
    while (sandboxesAlive.length > 0 && Date.now() < settleBy) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      sandboxesAlive = await alive();
    }

    // The results as stored: every line of the run's stream (a replaced result's line is deleted when the new
    // one commits, so more lines than episodes would be duplicates), the index, and the results themselves.
    const lines = await redis.xrange(keys.results(RUN_ID), '-', '+');
    const labels = lines.map(([, fields]) => fields[fields.indexOf('job') + 1] ?? '');
    const indexed = await redis.hlen(keys.resultIndex(RUN_ID));
    const results: EpisodeResult[] = (await new ResultStore(redis, keys).read(RUN_ID, { count: total * 2 + 100 })).map(
      (item) => item.result,
    );
    const expected = JSON.parse(await readFile(`${root}examples/expected.json`, 'utf8')) as Record<
      string,
      { resolved: boolean }
    >;
    const judged = judgeResults({ episodes, results, streamLabels: labels, indexed, expected });

    const workerExits = [...workers];
    await Promise.all(workerExits.map((w) => stopChild(w)));
    await stopChild(host.child);
    watch.checkText('redis-server', 'stdout', redisServer.log());

    const invariants: Invariant[] = [
      ...judged.invariants,
      {
        name: 'sandboxes alive after the lease TTL',
        count: sandboxesAlive.length,
        expected: 0,
        ok: sandboxesAlive.length === 0,
      },
      { name: 'secret values in log lines', count: watch.hits.length, expected: 0, ok: watch.hits.length === 0 },
    ];
    const failed = results.filter((r) => r.status === 'failed');
    return {
      episodes: total,
      results: results.length,
      complete,
      seconds,
      faults,
      workerSigkills: sigkills,
      redisRestarts: restarts,
      outcomes: {
        resolved: results.filter((r) => r.status === 'completed' && r.resolved === true).length,
        unresolved: results.filter((r) => r.status === 'completed' && r.resolved !== true).length,
        failed: failed.length,
      },
      failedByCode: tally(failed.map((r) => r.failure?.code ?? 'none')),
      attemptFailuresByCode: tally(
        results.flatMap((r) => r.attempts.flatMap((a) => (a.failure ? [a.failure.code] : []))),
      ),
      mismatches: judged.mismatches,
      unclassified: judged.unclassified,
      duplicates: judged.duplicates,
      sandboxesAlive,
      secretHits: watch.hits,
      logLines: watch.lines,
      invariants,
      ok: complete && invariants.every((i) => i.ok),
    };
  } finally {
    await Promise.all([...workers].map((w) => stopChild(w, 'SIGKILL')));
    if (host) await stopChild(host.child);
    await queue?.close().catch(() => undefined);
    // BullMQ leaves a connection it did not create open; after redis-server is gone it would reconnect forever.
    queueConnection?.disconnect();
    redis?.disconnect();
    await redisServer?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The invariants on the stored results: one result per episode (and per index entry), no duplicate stream
 * lines, every completed outcome as examples/expected.json says, every failure a code of the one error table
 * with the table's class — and a failed result never the model's and never with a reward (not even 0).
 */
export function judgeResults(o: {
  episodes: readonly Pick<Episode, 'episode_id' | 'sample_index'>[];
  results: readonly EpisodeResult[];
  /** The `job` field of every line of the run's results stream. */
  streamLabels: readonly string[];
  /** Entries in the run's result index. */
  indexed: number;
  expected: Readonly<Record<string, { resolved: boolean }>>;
}): { invariants: Invariant[]; mismatches: string[]; unclassified: string[]; duplicates: number } {
  const total = o.episodes.length;
  const perEpisode = new Set(o.results.map((r) => `${r.episode_id}#${r.sample_index}`));
  const missing = o.episodes.filter((e) => !perEpisode.has(`${e.episode_id}#${e.sample_index}`)).length;
  const duplicates = o.streamLabels.length - new Set(o.streamLabels).size + (o.results.length - perEpisode.size);
  const mismatches = o.results
    .filter((r) => r.status === 'completed' && r.resolved !== o.expected[r.instance_id]?.resolved)
    .map(
      (r) =>
        `${r.episode_id}#${r.sample_index}: resolved ${String(r.resolved)}, expected ${String(o.expected[r.instance_id]?.resolved)} (${r.failure?.code ?? 'no failure'})`,
    );
  const unclassified: string[] = [];
  const check = (where: string, failure: EpisodeResult['failure']): void => {
    if (failure === null) return;
    if (!isErrorCode(failure.code) || ERROR_CODES[failure.code].class !== failure.class)
      unclassified.push(`${where}: ${failure.code}/${failure.class}`);
  };
  for (const r of o.results) {
    const where = `${r.episode_id}#${r.sample_index}`;
    if (r.status === 'failed') {
      if (r.failure === null) unclassified.push(`${where}: failed without a failure`);
      else if (r.failure.class === 'model' || r.reward !== null)
        unclassified.push(`${where}: failed ${r.failure.code}/${r.failure.class} with reward ${String(r.reward)}`);
    }
    check(where, r.failure);
    r.attempts.forEach((a) => check(`${where} attempt ${a.attempt}`, a.failure));
  }
  const resultsOk = o.results.length === total && missing === 0 && o.indexed === total;
  return {
    invariants: [
      { name: 'results == episodes', count: o.results.length, expected: total, ok: resultsOk },
      { name: 'duplicate results', count: duplicates, expected: 0, ok: duplicates === 0 },
      {
        name: 'completed outcomes differing from examples/expected.json',
        count: mismatches.length,
        expected: 0,
        ok: mismatches.length === 0,
      },
      {
        name: 'failures not classified by the error table',
        count: unclassified.length,
        expected: 0,
        ok: unclassified.length === 0,
      },
    ],
    mismatches,
    unclassified,
    duplicates,
  };
}

/** The report as lines for a person: figures first, then each invariant with its count. */
export function formatChaosReport(report: ChaosReport): string[] {
  const f = report.faults;
  return [
    `episodes   ${report.episodes} submitted, ${report.results} results in ${report.seconds.toFixed(1)}s: ${report.outcomes.resolved} resolved, ${report.outcomes.unresolved} unresolved, ${report.outcomes.failed} failed ${JSON.stringify(report.failedByCode)}`,
    `faults     control-plane 5xx ${f.controlPlaneErrors}, gateway 502 ${f.gatewayErrors}, instance deaths ${f.instanceDeaths}, create throttled ${f.throttled}, cold-start timeouts ${f.coldStartTimeouts} (creates admitted ${f.createsAdmitted})`,
    `chaos      worker SIGKILLs ${report.workerSigkills}, Redis restarts ${report.redisRestarts.graceful} graceful + ${report.redisRestarts.sigkill} SIGKILL`,
    `attempts   failed attempts by code ${JSON.stringify(report.attemptFailuresByCode)}`,
    `logs       ${report.logLines} lines read from every process`,
    ...report.invariants.map((i) => `${i.ok ? 'ok  ' : 'FAIL'}       ${i.name}: ${i.count} (must be ${i.expected})`),
    ...report.mismatches.slice(0, 10).map((m) => `  mismatch    ${m}`),
    ...report.unclassified.slice(0, 10).map((u) => `  unclassified ${u}`),
    ...report.sandboxesAlive.slice(0, 10).map((s) => `  alive       ${s.id} ${s.status}`),
    ...report.secretHits.slice(0, 10).map((h) => `  secret      ${h.secret} in ${h.process} ${h.stream}: ${h.line}`),
  ];
}
