import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

describe('rollout-fleet sandbox-host', () => {
  it('prints the endpoint, route and a generated secret once, serves, and exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, 'sandbox-host', '--isolation', 'emulated', '--port', '0', '--log-level', 'silent'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8');
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('health:')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${String(code)}`)));
    });
    await ready;
    const endpoint = /VEFAAS_ENDPOINT=(\S+)/.exec(stdout)?.[1] ?? '';
    expect(stdout).toMatch(/VEFAAS_FUNCTION_ROUTE=http:\/\/127\.0\.0\.1:\d+\/fn\/fn-[0-9a-f]+/);
    expect(stdout.match(/VEFAAS_SECRET_KEY=/g)).toHaveLength(1);
    const health = await request(`${endpoint}/healthz`);
    expect(await health.body.json()).toMatchObject({ ok: true, isolation: 'emulated' });
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
  });

  it('never prints a secret key it was given', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        MAIN,
        'sandbox-host',
        '--isolation',
        'emulated',
        '--port',
        '0',
        '--access-key',
        'AKLTmine',
        '--secret-key',
        'very-secret-sk',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (output += chunk));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('health:')) resolve();
      });
    });
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    const [code, signal] = (await exited) as [number | null, string | null];
    expect({ code, signal, output }).toMatchObject({ code: 0 });
    expect(output).toContain('VEFAAS_ACCESS_KEY=AKLTmine');
    expect(output).not.toContain('very-secret-sk');
  });

  it('refuses the remote-code-execution configuration with exit 3 and says why', async () => {
    const cases = [
      { args: ['--host', '0.0.0.0', '--no-verify-signatures', '--isolation', 'none'], why: /isolation 'none'/ },
      {
        args: ['--host', '0.0.0.0', '--no-verify-signatures', '--isolation', 'emulated', '--gateway-key', 'gk'],
        why: /without signature verification/,
      },
      { args: ['--host', '0.0.0.0', '--isolation', 'emulated'], why: /without a gateway key \(--gateway-key\)/ },
    ];
    for (const { args, why } of cases) {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', MAIN, 'sandbox-host', '--port', '0', '--log-level', 'silent', ...args],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect({ code, stderr }).toMatchObject({ code: 3, stderr: expect.stringMatching(why) });
      expect(stderr).toMatch(/^sandbox-host: vefaas-local: refusing listening on 0\.0\.0\.0/);
    }
  });
});
