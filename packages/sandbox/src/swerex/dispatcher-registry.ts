import { Pool } from 'undici';

const SECOND = 1000;

/**
 * Pools per origin. A gateway is one origin for thousands of sandboxes, and an undici Pool looks for a free
 * connection by scanning all of its connections on every request: one pool at a thousand busy connections spent
 * ~4 % of a worker's CPU in that scan (bench:concurrency), 16 pools still ~1.6 %. Requests of one sandbox always
 * go to the same one of these pools (by its instance name), so each pool holds about 1/64 of the connections
 * (~16 at concurrency 1,000) and still reuses them.
 */
export const POOLS_PER_ORIGIN = 64;

export interface SharedDispatcherOptions {
  /** TCP/TLS connect timeout, separate from the request timeout. @defaultValue 10 s */
  connectTimeoutMs?: number;
  /** How long an idle keep-alive socket stays open. @defaultValue 30 s */
  keepAliveTimeoutMs?: number;
  /**
   * Chooses which of the origin's pools serves the caller (the sandbox's instance name): the same key always
   * gets the same pool. Without one, the origin's first pool.
   */
  shardKey?: string;
}

// Thousands of sandboxes sit behind one or a few gateway origins: a few keep-alive pools per origin, shared by
// every SwerexClient in the process, instead of a pool (and fresh TLS handshakes) per sandbox.
const pools = new Map<string, Pool>();

/**
 * A process-wide keep-alive pool for an origin (`scheme://host:port`), one of POOLS_PER_ORIGIN chosen by
 * `shardKey`. Options apply only when the pool is first created. HTTP/1.1 without pipelining: concurrent long
 * commands each get their own connection.
 */
export function dispatcherFor(origin: string, options: SharedDispatcherOptions = {}): Pool {
  const base = new URL(origin).origin;
  const shard = options.shardKey === undefined ? 0 : shardOf(options.shardKey);
  const key = shard === 0 ? base : `${base}#${shard}`;
  let pool = pools.get(key);
  if (pool === undefined || pool.closed || pool.destroyed) {
    pool = new Pool(base, {
      pipelining: 1,
      connect: { timeout: options.connectTimeoutMs ?? 10 * SECOND },
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30 * SECOND,
      // Per-request timeouts are set on each request (command timeout + margin); these are only fallbacks.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    pools.set(key, pool);
  }
  return pool;
}

/** FNV-1a of the key, modulo the pool count; shard 0 is the key-less pool, so keyed callers share it too. */
function shardOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % POOLS_PER_ORIGIN;
}

/** Closes every shared pool (process shutdown, test teardown). In-flight requests finish first. */
export async function closeSharedDispatchers(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}
