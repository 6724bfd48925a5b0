/**
 * Shared wiring of the cross-package pipeline tests: a real vefaas-local (bubblewrap sandboxes from
 * examples/images), a unique Redis prefix per test, the env a CLI child process needs to use that host
 * "as the cloud", and the clean-up that leaves Redis as it was.
 */
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import {
  createKeyspace,
  createLogger,
  createRedis,
  deleteKeysMatching,
  loadConfig,
  ResultStore,
  type Config,
  EpisodeSchema,
  type Episode,
  type EpisodeInput,
  type EpisodeJobData,
  type EpisodeResult,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import { createVefaasClient, type VefaasTarget, FLEET_LABEL_KEY, ensureFleetId } from '@rollout-fleet/sandbox';
import { startVefaasLocal, type VefaasLocalHandle, type VefaasLocalOptions } from '@rollout-fleet/vefaas-local';

export { FLEET_LABEL_KEY };

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const CLI = `${ROOT}bin/rollout-fleet.js`;
export const IMAGES_DIR = `${ROOT}examples/images`;
export const SWEEP = `${ROOT}examples/sweep.jsonl`;

export const silentLogger = createLogger({ level: 'silent', format: 'json' });

export interface Host {
  handle: VefaasLocalHandle;
  target: VefaasTarget;
  close(): Promise<void>;
}

export async function startHost(options: VefaasLocalOptions = {}): Promise<Host> {
  const handle = await startVefaasLocal({ imagesDir: IMAGES_DIR, logger: silentLogger, ...options });
  const vefaas = createVefaasClient({
    endpoint: handle.controlPlaneUrl,
    region: handle.region,
    credentials: { accessKeyId: handle.accessKeyId, secretAccessKey: handle.secretAccessKey },
  });
  return {
    handle,
    target: { vefaas, functionId: handle.functionId, gatewayUrl: handle.gatewayUrl },
    close: async () => {
      await vefaas.close();
      await handle.close();
    },
  };
}

/** Environment of one test: a fresh prefix so tests never see each other's jobs, results or leases. */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { REDIS_URL, RF_PREFIX: `{rf-test-${randomUUID()}}`, LOG_LEVEL: 'silent', ...extra };
}

export function configOf(env: Record<string, string>): Config {
  return loadConfig({ ...env }, { dotenvPath: false });
}

/** The variables that make a CLI child process treat `host` as real veFaaS. */
export function cloudEnvFor(host: VefaasLocalHandle): Record<string, string> {
  return {
    VEFAAS_ENDPOINT: host.controlPlaneUrl,
    VEFAAS_FUNCTION_ROUTE: host.gatewayUrl,
    VEFAAS_FUNCTION_ID: host.functionId,
    VEFAAS_ACCESS_KEY: host.accessKeyId,
    VEFAAS_SECRET_KEY: host.secretAccessKey,
  };
}

/** Only what a child needs: PATH/HOME from this process, nothing of the developer's RF_* / VEFAAS_* settings. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(RF_|VEFAAS_|VOLCE|REDIS_URL|LOG_)/.test(name)),
  );
  return { ...inherited, ...env };
}

export interface Pipeline {
  config: Config;
  redis: RedisClient;
  keys: Keyspace;
  queue: Queue<EpisodeJobData>;
  store: ResultStore;
  close(): Promise<void>;
}

/** Producer-side handles on the test's prefix; `close()` obliterates the queue and deletes every key. */
export function openPipeline(config: Config): Pipeline {
  const redis = createRedis(config.redis);
  const queueConnection = redis.duplicate();
  const keys = createKeyspace(config.queue.prefix);
  const queue = new Queue<EpisodeJobData>(config.queue.name, {
    connection: queueConnection,
    prefix: config.queue.prefix,
  });
  return {
    config,
    redis,
    keys,
    queue,
    store: new ResultStore(redis, keys),
    close: async () => {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      queueConnection.disconnect();
      await deleteKeysMatching(redis, `rf:${config.queue.prefix}:*`);
      await deleteKeysMatching(redis, `${config.queue.prefix}:*`);
      redis.disconnect();
    },
  };
}

/** Every result of a run committed so far (stream order). */
export async function resultsOf(pipeline: Pipeline, runId: string): Promise<EpisodeResult[]> {
  return (await pipeline.store.read(runId, { count: 10_000 })).map((item) => item.result);
}

/** Follows the run's stream until `count` results arrived. */
export async function collectResults(pipeline: Pipeline, runId: string, count: number): Promise<EpisodeResult[]> {
  const results: EpisodeResult[] = [];
  for await (const item of pipeline.store.follow(runId, { blockMs: 500, until: async () => results.length >= count })) {
    results.push(item.result);
    if (results.length >= count) break;
  }
  return results;
}

/** Sandboxes of this test's fleet (its fleet id, created once in Redis) that ListSandboxes still shows. */
export async function fleetSandboxes(host: Host, config: Config): Promise<Array<{ id: string; status: string }>> {
  const redis = createRedis(config.redis);
  try {
    const fleetId = await ensureFleetId(redis, createKeyspace(config.queue.prefix));
    const items = await host.target.vefaas.listAllSandboxes({
      FunctionId: host.target.functionId,
      Metadata: { [FLEET_LABEL_KEY]: fleetId },
    });
    return items.map((item) => ({ id: item.Id, status: item.Status ?? '' }));
  } finally {
    redis.disconnect();
  }
}

/** The leases (held sandbox slots) of a test's fleet right now. */
export async function leasesOf(pipeline: Pipeline): Promise<Array<Record<string, string>>> {
  const tickets = await pipeline.redis.zrange(pipeline.keys.leases(), 0, -1);
  const leases = await Promise.all(tickets.map((ticket) => pipeline.redis.hgetall(pipeline.keys.lease(ticket))));
  return leases.filter((lease) => Object.keys(lease).length > 0);
}

export async function readSweep(): Promise<string> {
  return readFile(SWEEP, 'utf8');
}

export async function readExpected(): Promise<Record<string, { resolved: boolean; note: string }>> {
  return JSON.parse(await readFile(`${ROOT}examples/expected.json`, 'utf8')) as Record<
    string,
    { resolved: boolean; note: string }
  >;
}

/** A small pyutils episode (the examples image), defaults applied; `overrides` are schema input. */
export function episode(runId: string, episodeId: string, overrides: Partial<EpisodeInput> = {}): Episode {
  return EpisodeSchema.parse({
    run_id: runId,
    episode_id: episodeId,
    instance_id: `pyutils__${episodeId}`,
    sandbox: { image: 'pyutils' },
    trajectory: [{ name: 'execute_bash', arguments: { command: 'echo hello' } }],
    ...overrides,
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` to completion and collects what it printed: the tests' one process runner. */
export async function runNode(args: string[], o: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  const child = spawn(process.execPath, args, { env: o.env, stdio: ['ignore', 'pipe', 'pipe'], cwd: o.cwd ?? ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** Runs `rollout-fleet <args>` to completion. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return runNode([CLI, ...args], { env: childEnv(env) });
}

/** Starts `rollout-fleet worker` as a real child process; its stderr is kept for failure messages. */
export function spawnWorker(
  env: Record<string, string>,
  args: readonly string[] = [],
): ChildProcess & { log: () => string } {
  const child = spawn(process.execPath, [CLI, 'worker', ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: ROOT,
  });
  let log = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-20_000)));
  return Object.assign(child, { log: () => log });
}

/** SIGTERM (or the given signal) and wait for the exit; resolves at once when it is already gone. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}
