/**
 * Wiring of the API tests: `startApi` on a fresh prefix over a vefaas-local host, plain HTTP calls (fetch
 * against loopback), and a line reader for the NDJSON streams that can drop its connection part-way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { startApi, type ApiServer } from '@rollout-fleet/api';
import type { Config, Logger } from '@rollout-fleet/shared';
import {
  CLI,
  ROOT,
  childEnv,
  configOf,
  openPipeline,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './pipeline-harness.js';

export interface TestApi {
  api: ApiServer;
  config: Config;
  pipeline: Pipeline;
  host: Host;
  /** fetch(api.url + path), with the token when the test's API has one. */
  call(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * An API on a fresh prefix. `env` adds configuration (RF_API_TOKEN, RF_FLEET_MAX_SANDBOXES...); `host` reuses a
 * sandbox host, else an emulated one (no processes: enough for runs and streams) is started and closed with it.
 */
export async function startTestApi(
  o: {
    env?: Record<string, string>;
    host?: Host;
    streams?: { keepAliveMs?: number; blockMs?: number };
    logger?: Logger;
    reaper?: boolean;
  } = {},
): Promise<TestApi> {
  const config = configOf(testEnv(o.env));
  const host = o.host ?? (await startHost({ isolation: 'emulated' }));
  const api = await startApi({
    config,
    port: 0,
    host: '127.0.0.1',
    logger: o.logger ?? silentLogger,
    target: host.target,
    reaper: o.reaper ?? false,
    streams: o.streams ?? { blockMs: 200 },
  });
  const pipeline = openPipeline(config);
  const token = config.api.token;
  return {
    api,
    config,
    pipeline,
    host,
    call: (path, init = {}) => {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token !== undefined && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${api.url}${path}`, {
        ...rest,
        headers,
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    },
    close: async () => {
      await api.close();
      await pipeline.close();
      if (o.host === undefined) await host.close();
    },
  };
}

export interface StreamRead {
  /** Parsed non-blank lines, in order. */
  lines: Array<Record<string, unknown>>;
  /** Blank keep-alive lines seen. */
  keepAlives: number;
  /** True when the connection was cut by `stopAfter` (the server never sent its end line to us). */
  dropped: boolean;
}

/**
 * GETs an NDJSON stream over a raw socket; with `stopAfter`, destroys the connection after that many item lines
 * (a client losing its network mid-stream), otherwise reads to the end.
 */
export function readNdjson(
  url: string,
  o: {
    stopAfter?: number;
    headers?: Record<string, string>;
    onKeepAlive?: () => void;
    onLine?: (line: Record<string, unknown>) => void;
  } = {},
): Promise<StreamRead> {
  return new Promise((resolve, reject) => {
    const read: StreamRead = { lines: [], keepAlives: 0, dropped: false };
    const req = httpRequest(url, { headers: o.headers ?? {} }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        reject(new Error(`HTTP ${res.statusCode} for ${url}`));
        res.resume();
        return;
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
          const line = buffer.slice(0, at);
          buffer = buffer.slice(at + 1);
          if (line.trim() === '') {
            read.keepAlives += 1;
            o.onKeepAlive?.();
            continue;
          }
          const parsed = JSON.parse(line) as Record<string, unknown>;
          read.lines.push(parsed);
          o.onLine?.(parsed);
          if (o.stopAfter !== undefined && read.lines.length >= o.stopAfter) {
            read.dropped = true;
            req.destroy();
            resolve(read);
            return;
          }
        }
      });
      res.on('end', () => resolve(read));
      res.on('error', (err) => (read.dropped ? resolve(read) : reject(err)));
    });
    req.on('error', (err) => (read.dropped ? resolve(read) : reject(err)));
    req.end();
  });
}

export interface ApiChild {
  child: ChildProcess;
  /** The URL the process printed (`api: http://127.0.0.1:<port> ...`). */
  url: string;
  /** Its stderr so far (for failure messages). */
  log(): string;
}

/** Starts `rollout-fleet api --port 0 <args>` as a real child process and waits for the URL it prints. */
export async function spawnApi(env: Record<string, string>, args: string[] = []): Promise<ApiChild> {
  const child = spawn(process.execPath, [CLI, 'api', '--port', '0', ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: ROOT,
  });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-20_000)));
  let out = '';
  child.stdout.setEncoding('utf8');
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: string): void => {
      out += chunk;
      const found = /^api: (http:\/\/\S+)/m.exec(out);
      if (found?.[1]) {
        child.stdout.off('data', onData);
        resolve(found[1]);
      }
    };
    child.stdout.on('data', onData);
    void once(child, 'exit').then(([code]) =>
      reject(new Error(`rollout-fleet api exited (${String(code)}) before listening:\n${log}`)),
    );
  });
  // Keep draining stdout so the child never blocks on a full pipe.
  child.stdout.resume();
  return { child, url, log: () => log };
}
