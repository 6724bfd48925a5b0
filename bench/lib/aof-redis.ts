/**
 * A `redis-server` of our own on a free loopback port, with the append-only file on and fsynced on every write
 * (`--appendfsync always`): the chaos sweep kills it with SIGKILL, and a write Redis acknowledged (a committed
 * result, a completed job) must survive that. `everysec` may lose the last second of acknowledged writes on a
 * crash, which would show up as lost or duplicated results and hide the bugs the sweep looks for.
 * It can be stopped gracefully (SHUTDOWN: the AOF is flushed) or with SIGKILL, and restarted on the same port
 * and directory (it loads the AOF back). Its log (stdout) is kept, like every other process's output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedis, freePort } from '@rollout-fleet/shared';

export interface AofRedis {
  url: string;
  port: number;
  /** Everything redis-server wrote, over all its lives. */
  log(): string;
  /** SHUTDOWN (flushes the AOF), then start again on the same port and directory; `downMs` in between. */
  restartGracefully(downMs?: number): Promise<void>;
  /** SIGKILL, then start again on the same port and directory; `downMs` in between. */
  restartAfterKill(downMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startAofRedis(): Promise<AofRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'rf-aof-redis-'));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let log = '';
  let child: ChildProcess;

  const start = async (): Promise<void> => {
    const server = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = server;
    // "Ready to accept connections" comes after the AOF is loaded: the readiness event to wait on.
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: string): void => {
        log += chunk;
        if (chunk.includes('Ready to accept connections')) resolve();
      };
      server.stdout!.setEncoding('utf8').on('data', onData);
      server.stderr!.setEncoding('utf8').on('data', onData);
      server.once('error', reject);
      server.once('exit', (code) =>
        reject(new Error(`redis-server on ${port} exited (${String(code)}): ${log.slice(-500)}`)),
      );
    });
  };

  const exited = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
  };

  const shutdown = async (): Promise<void> => {
    const client = createRedis(url, { role: 'fail-fast' });
    client.on('error', () => undefined);
    const gone = exited();
    // SHUTDOWN closes the connection instead of answering: the exit is the answer.
    await client.call('SHUTDOWN').catch(() => undefined);
    client.disconnect();
    await gone;
  };

  const kill = async (): Promise<void> => {
    const gone = exited();
    child.kill('SIGKILL');
    await gone;
  };

  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  await start();
  return {
    url,
    port,
    log: () => log,
    restartGracefully: async (downMs = 0) => {
      await shutdown();
      await pause(downMs);
      await start();
    },
    restartAfterKill: async (downMs = 0) => {
      await kill();
      await pause(downMs);
      await start();
    },
    close: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
