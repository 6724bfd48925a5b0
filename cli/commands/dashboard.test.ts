import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createRedis } from '@rollout-fleet/shared';
import { afterAll, describe, expect, it } from 'vitest';

// The bin resolves tsx from its own location, so the CLI can run from a directory without node_modules.
const BIN = fileURLToPath(new URL('../../bin/rollout-fleet.js', import.meta.url));
const PASSWORD = `pw-${randomUUID()}`;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `{rf-cli-${randomUUID()}}`;

function runCli(
  args: string[],
  env: Record<string, string>,
): { child: ReturnType<typeof spawn>; output: () => string; stdout: () => string } {
  // A clean environment and a directory without .env, so only the variables given here count.
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', REDIS_URL, LOG_FORMAT: 'json', LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let all = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => ((out += c), (all += c)));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (all += c));
  return { child, output: () => all, stdout: () => out };
}

describe('rollout-fleet dashboard', () => {
  afterAll(async () => {
    // BullMQ writes the queue's meta key on connect.
    const redis = createRedis(REDIS_URL);
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('prints its URL, serves with basic auth, never prints the password, and exits 0 on SIGTERM', async () => {
    const { child, output, stdout } = runCli(['dashboard', '--port', '0'], {
      RF_PREFIX: PREFIX,
      RF_DASHBOARD_USER: 'op',
      RF_DASHBOARD_PASSWORD: PASSWORD,
    });
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', () => {
        const found = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout());
        if (found) resolve(found[1] as string);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${String(code)}: ${output()}`)));
    });
    expect((await fetch(new URL('/api/runs', url))).status).toBe(401);
    const ok = await fetch(new URL('/api/runs', url), {
      headers: { authorization: `Basic ${Buffer.from(`op:${PASSWORD}`).toString('base64')}` },
    });
    expect(ok.status).toBe(200);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(output()).toContain('dashboard listening');
    expect(output()).not.toContain(PASSWORD);
  });

  it('refuses a non-loopback host without credentials (exit 3, clear message)', async () => {
    const { child, output } = runCli(['dashboard', '--port', '0', '--host', '0.0.0.0'], {});
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(3);
    expect(output()).toMatch(/refusing to listen on 0\.0\.0\.0 without credentials/);
  });
});
