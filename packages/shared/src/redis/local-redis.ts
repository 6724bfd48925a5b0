/**
 * Finds a Redis for commands that must work on a fresh machine (the demo): REDIS_URL if set, else the
 * usual 127.0.0.1:6379 if it answers, else a throwaway `redis-server` from PATH on a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../net/free-port.js';
import { createRedis } from './create-redis.js';

export interface FoundRedis {
  url: string;
  origin: 'REDIS_URL' | 'default port' | 'spawned';
  close(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const redis = createRedis(url, { role: 'fail-fast', connectTimeoutMs: 1500 });
  // A refused connection is the answer here, not an error to report.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export async function findRedis(envUrl: string | undefined, usual = 'redis://127.0.0.1:6379'): Promise<FoundRedis> {
  const none = async (): Promise<void> => undefined;
  if (envUrl) return { url: envUrl, origin: 'REDIS_URL', close: none };
  if (await answers(usual)) return { url: usual, origin: 'default port', close: none };
  const port = await freePort();
  let child: ChildProcess;
  try {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    await Promise.race([once(child, 'spawn'), once(child, 'error').then(([err]) => Promise.reject(err as Error))]);
  } catch {
    throw new Error(
      'no Redis found: set REDIS_URL, start one on 127.0.0.1:6379, or install redis-server (apt-get install redis-server)',
    );
  }
  const url = `redis://127.0.0.1:${port}`;
  // redis-server needs a moment to bind; poll its answer (bounded), there is no readiness event to wait on.
  for (let i = 0; i < 50 && !(await answers(url)); i += 1) await new Promise((r) => setTimeout(r, 100));
  if (!(await answers(url))) {
    child.kill('SIGKILL');
    throw new Error(`redis-server did not answer on ${url}; set REDIS_URL or start Redis on 127.0.0.1:6379`);
  }
  return {
    url,
    origin: 'spawned',
    close: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}
