import { createServer } from 'node:net';
import { once } from 'node:events';
import { createRedis } from './create-redis.js';
import { describe, expect, it } from 'vitest';
import { findRedis } from './local-redis.js';

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('findRedis (the demo on a fresh machine)', () => {
  it('takes REDIS_URL as given', async () => {
    const found = await findRedis('redis://example.invalid:1');
    expect(found).toMatchObject({ url: 'redis://example.invalid:1', origin: 'REDIS_URL' });
  });

  it('uses the usual port when it answers', async () => {
    const found = await findRedis(undefined, process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    expect(found.origin).toBe('default port');
  });

  it('spawns redis-server from PATH when nothing answers, and stops it on close', async () => {
    const found = await findRedis(undefined, `redis://127.0.0.1:${await closedPort()}`);
    expect(found.origin).toBe('spawned');
    const client = createRedis(found.url, { role: 'fail-fast' });
    await client.connect();
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
    await found.close();
    const after = createRedis(found.url, { role: 'fail-fast' });
    after.on('error', () => undefined);
    await expect(after.connect()).rejects.toThrow();
    after.disconnect();
  });
});
