/**
 * How a user names their Redis: one URL in REDIS_URL.
 * - `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS): one Redis server.
 * - `redis+cluster://[user:password@]host:port[,host:port…]` or `rediss+cluster://…`: a Redis Cluster,
 *   given by one or more seed nodes (the client discovers the rest with CLUSTER SLOTS). A cluster has
 *   no database index, so a `/db` path is refused.
 * The whole product reads Redis settings from this one parse (see create-redis.ts).
 */

export interface RedisNode {
  host: string;
  port: number;
}

export interface RedisClusterEndpoint {
  /** Seed nodes, in the order given. */
  nodes: RedisNode[];
  tls: boolean;
  username: string | undefined;
  password: string | undefined;
}

/** Redis as configured: the URL as given, plus the cluster seeds when the URL names a cluster. */
export interface RedisConfig {
  /** REDIS_URL as given (may hold a password: print it with `describeRedisUrl`). */
  url: string;
  /** Set for `redis+cluster://` / `rediss+cluster://` URLs; undefined for one server. */
  cluster: RedisClusterEndpoint | undefined;
}

export const REDIS_URL_SCHEMES = ['redis:', 'rediss:', 'redis+cluster:', 'rediss+cluster:'] as const;

const DEFAULT_PORT = 6379;

/** Why a REDIS_URL is unusable, worded as "what is wrong; what to do". */
export class RedisUrlError extends Error {
  override readonly name = 'RedisUrlError';
}

function parseNode(text: string): RedisNode {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(text);
  if (match === null)
    throw new RedisUrlError(`has a node "${text}" that is not host:port; list nodes as host:port,host:port`);
  const host = (match[1] ?? match[2]) as string;
  const port = match[3] === undefined ? DEFAULT_PORT : Number(match[3]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new RedisUrlError(`has a node "${text}" whose port is not 1-65535`);
  return { host, port };
}

function parseCluster(value: string, tls: boolean): RedisClusterEndpoint {
  const match = /^rediss?\+cluster:\/\/(?:([^@/]*)@)?([^/?#]*)(\/?)([^?#]*)([?#].*)?$/.exec(value);
  if (match === null)
    throw new RedisUrlError('is not a redis+cluster:// URL; write redis+cluster://host:port[,host:port…]');
  const [, userinfo, hosts = '', , path = '', rest] = match;
  if (path !== '')
    throw new RedisUrlError('names a database index, but a Redis Cluster has only database 0; remove the /<db> path');
  if (rest !== undefined) throw new RedisUrlError('has a query or fragment, which cluster URLs do not take; remove it');
  if (hosts === '') throw new RedisUrlError('lists no nodes; write redis+cluster://host:port[,host:port…]');
  const nodes = hosts.split(',').map((node) => parseNode(node.trim()));
  let username: string | undefined;
  let password: string | undefined;
  if (userinfo !== undefined && userinfo !== '') {
    const colon = userinfo.indexOf(':');
    const rawUser = colon === -1 ? userinfo : userinfo.slice(0, colon);
    const rawPassword = colon === -1 ? undefined : userinfo.slice(colon + 1);
    try {
      username = rawUser === '' ? undefined : decodeURIComponent(rawUser);
      password = rawPassword === undefined || rawPassword === '' ? undefined : decodeURIComponent(rawPassword);
    } catch {
      throw new RedisUrlError(
        'has a user or password that is not valid percent-encoding; percent-encode special characters',
      );
    }
  }
  return { nodes, tls, username, password };
}

/** Parses and checks REDIS_URL. Throws `RedisUrlError` (its message never contains the URL). */
export function parseRedisUrl(value: string): RedisConfig {
  const url = value.trim().replace(/(:\/\/.+?)\/+$/, '$1');
  const scheme = /^([a-z+]+):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'redis+cluster' || scheme === 'rediss+cluster') {
    return { url, cluster: parseCluster(url, scheme === 'rediss+cluster') };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisUrlError(
      'is not a URL; give redis://host:port, rediss://host:port or redis+cluster://host:port[,host:port…]',
    );
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new RedisUrlError(
      'is not a redis://, rediss://, redis+cluster:// or rediss+cluster:// URL; give one of those',
    );
  }
  return { url, cluster: undefined };
}

/** The URL with any password masked, for messages and logs. */
export function describeRedisUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/)([^@/]*)@/i, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon === -1 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}
