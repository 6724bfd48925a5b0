import { Pool } from 'undici';

const SECOND = 1000;

export interface SharedDispatcherOptions {
  /** TCP/TLS connect timeout, separate from the request timeout. @defaultValue 10 s */
  connectTimeoutMs?: number;
  /** How long an idle keep-alive socket stays open. @defaultValue 30 s */
  keepAliveTimeoutMs?: number;
}

// Thousands of sandboxes sit behind one or a few gateway origins: one keep-alive pool per origin, shared by
// every SwerexClient in the process, instead of a pool (and fresh TLS handshakes) per sandbox.
const pools = new Map<string, Pool>();

/**
 * The process-wide keep-alive pool for an origin (`scheme://host:port`). Options apply only when the pool is
 * first created. HTTP/1.1 without pipelining: concurrent long commands each get their own connection.
 */
export function dispatcherFor(origin: string, options: SharedDispatcherOptions = {}): Pool {
  const key = new URL(origin).origin;
  let pool = pools.get(key);
  if (pool === undefined || pool.closed || pool.destroyed) {
    pool = new Pool(key, {
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

/** Closes every shared pool (process shutdown, test teardown). In-flight requests finish first. */
export async function closeSharedDispatchers(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}
