/**
 * The Python client's own tests (clients/python, `python3 -m unittest`, standard library only) against a live
 * `rollout-fleet api --worker` child process: the API, a worker and an embedded vefaas-local (real sandboxes
 * under bubblewrap) in one command, with a bearer token. Every Python test must run (none skipped) and pass.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { commandNeed, describeWith } from '@rollout-fleet/test-kit/needs';
import { spawnApi, type ApiChild } from './support/api-harness.js';
import {
  ROOT,
  childEnv,
  configOf,
  openPipeline,
  stopChild,
  testEnv,
  type Pipeline,
} from './support/pipeline-harness.js';

const TOKEN = `tok-${randomUUID()}`;

describeWith([bwrapNeed(), commandNeed('python3', 'python3')], 'Python client (clients/python)', () => {
  let api: ApiChild;
  let pipeline: Pipeline;

  beforeAll(async () => {
    const env = testEnv({ RF_API_TOKEN: TOKEN, RF_WORKER_CONCURRENCY: '4', LOG_LEVEL: 'warn' });
    pipeline = openPipeline(configOf(env));
    api = await spawnApi(env, ['--worker']);
  });
  afterAll(async () => {
    if (api) await stopChild(api.child, 'SIGTERM');
    await pipeline?.close();
  });

  it('passes every test of the client with python3 -m unittest', async () => {
    const python = spawn('python3', ['-m', 'unittest', '-v', 'test_rollout_fleet'], {
      cwd: `${ROOT}clients/python`,
      env: childEnv({ RF_API_URL: api.url, RF_API_TOKEN: TOKEN, PYTHONDONTWRITEBYTECODE: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    python.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    python.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const [code] = (await once(python, 'exit')) as [number | null];
    expect(code, `${output}\n--- api log ---\n${api.log()}`).toBe(0);
    expect(output).toMatch(/^Ran 14 tests in /m);
    expect(output).toMatch(/^OK$/m);
    expect(output).not.toMatch(/skipped/);
  }, 180_000);

  it('stops cleanly on SIGTERM (sessions ended, worker closed), exit 0', async () => {
    await stopChild(api.child, 'SIGTERM');
    expect(api.child.exitCode, api.log()).toBe(0);
  });
});
