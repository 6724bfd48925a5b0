/**
 * A TCP port free on 127.0.0.1 right now, for programs that must be told a port (redis-server) rather
 * than listen on port 0 themselves. Another process may take it before it is used; callers that can
 * fail on that retry with a new port.
 */
import { once } from 'node:events';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port on 127.0.0.1');
  return address.port;
}

/** True when nothing listens on 127.0.0.1:`port` and we may bind it. */
export async function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  server.listen(port, '127.0.0.1');
  try {
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
