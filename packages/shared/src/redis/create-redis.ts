/**
 * The one place Redis connections are made. Every part of the product (CLI, workers, dashboard, API,
 * tests, benchmarks) asks this factory, so one REDIS_URL decides between a single server (`Redis`) and
 * a Redis Cluster (`Cluster`), and BullMQ is handed the same kind of client as our own code.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { parseRedisUrl, type RedisClusterEndpoint, type RedisConfig } from './redis-url.js';

/** A connection to a single server or to a cluster; both speak the same commands. */
export type RedisClient = Redis | Cluster;

/**
 * What the connection is for:
 * - `commands` (default): ordinary commands; a command survives a short reconnect.
 * - `blocking`: BullMQ workers and `XREAD BLOCK` readers: a command waits across reconnects for as long
 *   as it takes (BullMQ requires `maxRetriesPerRequest: null` on worker connections).
 * - `fail-fast`: one connection attempt within `connectTimeoutMs` and no reconnects: short-lived
 *   commands that must say "Redis is not there" at once instead of hanging.
 */
export type RedisRole = 'commands' | 'blocking' | 'fail-fast';

export interface CreateRedisOptions {
  /** @defaultValue 'commands' */
  role?: RedisRole;
  /** Connect on first command (or `connect()`) instead of at once. @defaultValue true for fail-fast, else false */
  lazyConnect?: boolean;
  /** @defaultValue 5 000 ms for fail-fast, else ioredis' 10 000 ms */
  connectTimeoutMs?: number;
  /** CLIENT SETNAME, shown by `CLIENT LIST` (helps an operator see who holds connections). */
  connectionName?: string;
}

const FAIL_FAST_CONNECT_TIMEOUT_MS = 5000;

function retriesFor(role: RedisRole): number | null | undefined {
  if (role === 'blocking') return null;
  if (role === 'fail-fast') return 1;
  return undefined; // ioredis' default (20 retries across reconnects)
}

function commonOptions(role: RedisRole, options: CreateRedisOptions): RedisOptions {
  const connectTimeout = options.connectTimeoutMs ?? (role === 'fail-fast' ? FAIL_FAST_CONNECT_TIMEOUT_MS : undefined);
  const retries = retriesFor(role);
  return {
    ...(retries !== undefined ? { maxRetriesPerRequest: retries } : {}),
    ...(connectTimeout !== undefined ? { connectTimeout } : {}),
    ...(options.connectionName !== undefined ? { connectionName: options.connectionName } : {}),
  };
}

function clusterOptions(endpoint: RedisClusterEndpoint, role: RedisRole, options: CreateRedisOptions): ClusterOptions {
  return {
    lazyConnect: options.lazyConnect ?? role === 'fail-fast',
    ...(role === 'fail-fast' ? { clusterRetryStrategy: () => null } : {}),
    redisOptions: {
      ...commonOptions(role, options),
      ...(endpoint.username !== undefined ? { username: endpoint.username } : {}),
      ...(endpoint.password !== undefined ? { password: endpoint.password } : {}),
      ...(endpoint.tls ? { tls: {} } : {}),
    },
    // Managed TLS clusters announce node IPs while certificates name hosts: keep the name for the TLS check.
    ...(endpoint.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
  };
}

/**
 * A new connection to the configured Redis (`config.redis`, or a REDIS_URL string). Close it with
 * `disconnect()` / `quit()`. Hand it to BullMQ as `connection:`; BullMQ then uses the same kind of client.
 */
export function createRedis(target: RedisConfig | string, options: CreateRedisOptions = {}): RedisClient {
  const config = typeof target === 'string' ? parseRedisUrl(target) : target;
  const role = options.role ?? 'commands';
  const client =
    config.cluster !== undefined
      ? new Cluster(config.cluster.nodes, clusterOptions(config.cluster, role, options))
      : new Redis(config.url, {
          lazyConnect: options.lazyConnect ?? role === 'fail-fast',
          ...(role === 'fail-fast' ? { retryStrategy: () => null } : {}),
          ...commonOptions(role, options),
        });
  // Without a listener ioredis prints "[ioredis] Unhandled error event" for every failed (re)connect — library
  // noise ahead of the project's own message. Commands still reject with the error, and whoever owns the
  // connection reports it (connectRedis, health checks, BullMQ's error events).
  client.on('error', ignoreConnectionError);
  return client;
}

function ignoreConnectionError(): void {}

/** True when the client talks to a Redis Cluster. */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}
