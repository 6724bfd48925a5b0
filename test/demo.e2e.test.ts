/**
 * `npm run demo`, the README's main command, as a person runs it: a child process that embeds vefaas-local,
 * runs two worker processes, and exits 0 only when every outcome matches examples/expected.json.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ROOT, childEnv } from './support/pipeline-harness.js';

describe('npm run demo', () => {
  it('runs the examples sweep and reports every expected outcome', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/demo.ts'], {
      cwd: ROOT,
      env: childEnv({ ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect({ code, stderr: stderr.slice(-2000) }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(stdout).toMatch(/summary\s+6 episodes: 3 resolved, 3 unresolved, 0 failed; 0 unexpected/);
    expect(stdout).toContain('demo: every outcome matches examples/expected.json');
    for (const id of ['pyutils__calc-add', 'pyutils__fizz-order', 'pyutils__stats-mean']) {
      expect(stdout).toMatch(new RegExp(`${id}\\s+true\\s+true`));
    }
  }, 120_000);
});
