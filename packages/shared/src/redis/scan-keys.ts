/**
 * Key listing that also works on a cluster, where each master holds its own keys (a plain SCAN or KEYS
 * sees one node only). For clean-up of a prefix (tests, the demo, benchmarks), never on a hot path.
 */
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './create-redis.js';

async function scanNode(node: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** Every key matching the glob `pattern`, from every master of a cluster or the one server. */
export async function keysMatching(client: RedisClient, pattern: string): Promise<string[]> {
  const nodes = isCluster(client) ? client.nodes('master') : [client];
  return (await Promise.all(nodes.map((node) => scanNode(node, pattern)))).flat();
}

/** Deletes every key matching `pattern`; returns how many were deleted. */
export async function deleteKeysMatching(client: RedisClient, pattern: string): Promise<number> {
  const keys = await keysMatching(client, pattern);
  // One key per command: a cluster refuses a multi-key DEL over several slots.
  const deleted = await Promise.all(keys.map((key) => client.unlink(key)));
  return deleted.reduce((sum, n) => sum + n, 0);
}
