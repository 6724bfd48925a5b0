/**
 * Sandbox ownership records in Redis. Wire contract:
 * - `lease:<sandboxId>` = JSON {sandboxId, workerId, jobId, expiresAt} with PX = ttl (gone when not renewed),
 * - `leases` sorted set: sandboxId scored by expiry (ms), so the reaper finds expired ones in one range query.
 * Both are written in one MULTI so they never disagree for long.
 */
import type { Keyspace, RedisClient } from '@rollout-fleet/shared';

export interface Lease {
  sandboxId: string;
  workerId: string;
  jobId: string;
  /** Epoch ms. */
  expiresAt: number;
}

export class LeaseStore {
  readonly #redis: RedisClient;
  readonly #keys: Keyspace;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(redis: RedisClient, keys: Keyspace, options: { ttlMs: number; now?: () => number }) {
    this.#redis = redis;
    this.#keys = keys;
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  get ttlMs(): number {
    return this.#ttlMs;
  }

  async acquire(owner: { sandboxId: string; workerId: string; jobId: string }): Promise<Lease> {
    const lease: Lease = { ...owner, expiresAt: this.#now() + this.#ttlMs };
    await this.#write(lease);
    return lease;
  }

  /** Extends a lease; false if it had already expired or been released (the sandbox may be reaped). */
  async renew(lease: Lease): Promise<boolean> {
    const exists = await this.#redis.exists(this.#keys.lease(lease.sandboxId));
    if (exists === 0) return false;
    lease.expiresAt = this.#now() + this.#ttlMs;
    await this.#write(lease);
    return true;
  }

  async release(sandboxId: string): Promise<void> {
    await this.#redis.multi().del(this.#keys.lease(sandboxId)).zrem(this.#keys.leases(), sandboxId).exec();
  }

  async get(sandboxId: string): Promise<Lease | undefined> {
    const raw = await this.#redis.get(this.#keys.lease(sandboxId));
    return raw === null ? undefined : (JSON.parse(raw) as Lease);
  }

  /** Sandbox ids whose lease expiry has passed. */
  async expired(limit = 500): Promise<string[]> {
    return this.#redis.zrangebyscore(this.#keys.leases(), '-inf', this.#now(), 'LIMIT', 0, limit);
  }

  /** Which of the given sandboxes hold a live lease. */
  async leased(sandboxIds: readonly string[]): Promise<Set<string>> {
    if (sandboxIds.length === 0) return new Set();
    const pipeline = this.#redis.pipeline();
    for (const id of sandboxIds) pipeline.exists(this.#keys.lease(id));
    const answers = (await pipeline.exec()) ?? [];
    return new Set(sandboxIds.filter((_, i) => answers[i]?.[1] === 1));
  }

  async count(): Promise<number> {
    return this.#redis.zcard(this.#keys.leases());
  }

  async #write(lease: Lease): Promise<void> {
    await this.#redis
      .multi()
      .set(this.#keys.lease(lease.sandboxId), JSON.stringify(lease), 'PX', this.#ttlMs)
      .zadd(this.#keys.leases(), lease.expiresAt, lease.sandboxId)
      .exec();
  }
}
