/**
 * Which episodes of each run are running, and which wait for a retry, as counters the workers keep
 * (run-activity/{start,finish,sweep}.lua): `status` and the dashboard's run pages read their sizes instead of
 * listing every active and delayed job. A worker proves it is alive with a key that expires (`heartbeat`); the entries of a worker
 * that died are swept once Redis has expired that key, so a SIGKILL never leaves a run "active" forever.
 */
import { LuaScript, type Keyspace, type RedisClient } from '@rollout-fleet/shared';

const SCRIPTS = {
  start: LuaScript.load(new URL('./run-activity/start.lua', import.meta.url)),
  finish: LuaScript.load(new URL('./run-activity/finish.lua', import.meta.url)),
  sweep: LuaScript.load(new URL('./run-activity/sweep.lua', import.meta.url)),
};

export class RunActivity {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #workerId: string;

  constructor(redis: RedisClient, keys: Keyspace, workerId: string) {
    this.#redis = redis;
    this.#keys = keys;
    this.#workerId = workerId;
  }

  async start(runId: string, jobId: string): Promise<void> {
    await this.#run('start', jobId, runId, this.#workerId);
  }

  /** The job stopped running here; `retrying` when it will run again after a back-off. */
  async finish(runId: string, jobId: string, retrying: boolean): Promise<void> {
    await this.#run('finish', jobId, runId, this.#workerId, retrying ? 1 : 0);
  }

  /** This worker is alive for another `ttlMs`. */
  async heartbeat(ttlMs: number): Promise<void> {
    await this.#redis.set(this.#keys.workerAlive(this.#workerId), '1', 'PX', ttlMs);
  }

  async leave(): Promise<void> {
    await this.#redis.del(this.#keys.workerAlive(this.#workerId));
  }

  /** Drops the running entries of dead workers; returns how many. */
  async sweep(): Promise<number> {
    return Number(await this.#run('sweep'));
  }

  #run(op: keyof typeof SCRIPTS, ...args: Array<string | number>): Promise<unknown> {
    return SCRIPTS[op].run(this.#redis, [this.#keys.activeJobs()], [this.#keys.slotBase(), ...args]);
  }
}
