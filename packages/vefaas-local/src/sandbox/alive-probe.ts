/** One `GET /is_alive` over a sandbox's UNIX socket (readiness probe for the control plane and tests). */
import { Client } from 'undici';

export interface AliveProbe {
  socketPath: string;
  authToken: string;
  /** @defaultValue 2000 */
  timeoutMs?: number;
}

/** True only for 200 `{"is_alive": true}`; false on any connection error, timeout or other status. */
export async function isSwerexAlive(probe: AliveProbe): Promise<boolean> {
  const timeout = probe.timeoutMs ?? 2000;
  const client = new Client('http://localhost', {
    socketPath: probe.socketPath,
    connectTimeout: timeout,
    headersTimeout: timeout,
    bodyTimeout: timeout,
  });
  try {
    const response = await client.request({
      method: 'GET',
      path: '/is_alive',
      headers: probe.authToken === '' ? {} : { 'x-api-key': probe.authToken },
    });
    const body = await response.body.text();
    return response.statusCode === 200 && (JSON.parse(body) as { is_alive?: unknown }).is_alive === true;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => undefined);
  }
}
