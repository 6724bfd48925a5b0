/**
 * `npm run demo -- --policy`, as a new user runs it: the agent loop against the scripted policy server, two worker
 * processes, every outcome (resolved and exit status) as examples/policy/expected.json says.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ROOT, childEnv } from './support/pipeline-harness.js';

describe('npm run demo -- --policy', () => {
  it('runs the policy examples against the scripted server and reports every expected outcome', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/demo.ts', '--policy'], {
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
    expect(stdout).toMatch(/policy\s+scripted OpenAI-compatible server http:\/\/127\.0\.0\.1:\d+\/v1/);
    expect(stdout).toMatch(/summary\s+6 episodes: 4 resolved, 2 unresolved, 0 failed; 0 unexpected/);
    expect(stdout).toContain('demo: every outcome matches examples/policy/expected.json');
    expect(stdout).toMatch(/pyutils__slug-lower\s+true\s+submitted \(exit_context\)/);
    expect(stdout).toMatch(/pyutils__fizz-order\s+true\s+submitted\s+true, submitted\s+1\s+3\s+1\s/);
    // The demo's endpoint key never reaches the screen.
    expect(`${stdout}${stderr}`).not.toMatch(/demo-[0-9a-f]{24}/);
  }, 120_000);
});
