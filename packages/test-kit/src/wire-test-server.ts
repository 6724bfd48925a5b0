/**
 * Test helper: a wire-level HTTP server on 127.0.0.1 port 0 that records every request (method, URL, headers,
 * raw body, client port) and lets each test answer — or drop the connection, or never answer.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Client-side port of the TCP connection: equal ports mean a reused keep-alive socket. */
  remotePort: number;
  /** Index among all requests this server received. */
  index: number;
}

export type WireHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface WireServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startWireServer(handler: WireHandler): Promise<WireServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://127.0.0.1'),
        headers: req.headers,
        body: Buffer.concat(chunks),
        remotePort: req.socket.remotePort ?? 0,
        index: requests.length,
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded, res)).catch((err: unknown) => {
        res.statusCode = 599;
        res.end(String(err));
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The request body parsed as JSON. */
export function jsonOf(req: RecordedRequest): unknown {
  return JSON.parse(req.body.toString('utf8'));
}
