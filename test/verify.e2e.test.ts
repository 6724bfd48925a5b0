/**
 * `rollout-fleet verify` as a user runs it: a child process of bin/rollout-fleet.js with a clean environment.
 * No VEFAAS_* → an embedded vefaas-local; VEFAAS_* pointing at a vefaas-local started here → "cloud" mode
 * over the real signed control plane and gateway route, offline because the host is on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@rollout-fleet/shared';
import { startVefaasLocal, type VefaasLocalHandle } from '@rollout-fleet/vefaas-local';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { runNode } from './support/pipeline-harness.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'bin/rollout-fleet.js');

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Only what a fresh shell has: no REDIS_URL, no VEFAAS_*, no RF_*. The cwd has no .env file. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'warn', ...extra };
}

function verify(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Finished> {
  return runNode([CLI, 'verify', ...args], { env, cwd });
}

const STEPS = [
  'start sandbox (create, wait until alive, session)',
  'install tools (execute_bash, str_replace_editor)',
  'which str_replace_editor',
  'str_replace_editor create --path /tmp/demo.py',
  "execute_bash 'python3 /tmp/demo.py > /tmp/demo_out.txt'",
  'cat /tmp/demo_out.txt',
  'close (session closed, sandbox killed)',
];

function expectEveryStepOk(out: Finished): void {
  const lines = out.stdout.split('\n');
  for (const step of STEPS) {
    expect(
      lines.some((line) => line.startsWith(`ok     ${step}`)),
      `${step}\n${out.stdout}\n${out.stderr}`,
    ).toBe(true);
  }
  expect(lines.find((line) => line.startsWith('ok     cat /tmp/demo_out.txt'))).toMatch(/s {2}6$/);
  expect(lines.find((line) => line.startsWith('ok     which str_replace_editor'))).toMatch(/\/str_replace_editor$/);
  expect(out.stdout).not.toContain('FAILED');
  expect(out.stdout).toContain('verify: every step passed');
}

describeWith([bwrapNeed()], 'rollout-fleet verify', () => {
  let cwd: string;

  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'rf-verify-'));
  });
  afterAll(async () => {
    await rm(cwd, { recursive: true, force: true });
  });

  it('passes every step against the embedded vefaas-local, offline (no pip)', async () => {
    const out = await verify([], cleanEnv(), cwd);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^verify: sandboxes from embedded vefaas-local at http:\/\/127\.0\.0\.1:\d+ \(bwrap\)/);
    expectEveryStepOk(out);
    expect(out.stdout).toMatch(/^skip {3}pip install numpy -q .*offline: embedded vefaas-local/m);
  });

  it('exits 1 and names the failed step and why for an image that does not exist', async () => {
    const started = performance.now();
    const out = await verify(['--image', 'does-not-exist'], cleanEnv(), cwd);
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^FAILED start sandbox \(create, wait until alive, session\)/m);
    expect(out.stdout).not.toContain('ok     install tools');
    // The sandbox it created is still killed.
    expect(out.stdout).toMatch(/^ok {5}close \(session closed, sandbox killed\)/m);
    expect(out.stderr).toMatch(
      /verify: failed at "start sandbox \(create, wait until alive, session\): .*function_initialize_failed/,
    );
    // A Failed sandbox is noticed at once, not after the 180 s startup timeout.
    expect(performance.now() - started).toBeLessThan(30_000);
  });

  describe('"cloud" mode against a vefaas-local started here', () => {
    let host: VefaasLocalHandle;
    let cloudEnv: NodeJS.ProcessEnv;

    beforeAll(async () => {
      host = await startVefaasLocal({
        isolation: 'bwrap',
        imagesDir: join(ROOT, 'examples/images'),
        logger: createLogger({ level: 'silent', format: 'json' }),
      });
      cloudEnv = cleanEnv({
        VEFAAS_ENDPOINT: host.controlPlaneUrl,
        VEFAAS_FUNCTION_ROUTE: host.gatewayUrl,
        VEFAAS_FUNCTION_ID: host.functionId,
        VEFAAS_ACCESS_KEY: host.accessKeyId,
        VEFAAS_SECRET_KEY: host.secretAccessKey,
        VEFAAS_REGION: host.region,
        RF_SANDBOX_IMAGE: 'python',
      });
    });
    afterAll(async () => {
      await host?.close();
    });

    it('passes every step through the signed control plane and the gateway, offline because the host is on loopback', async () => {
      const out = await verify([], cloudEnv, cwd);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain(
        `verify: sandboxes from veFaaS ${host.controlPlaneUrl} (function ${host.functionId}`,
      );
      expectEveryStepOk(out);
      expect(out.stdout).toMatch(
        /^skip {3}pip install numpy -q .*offline: the sandbox host is on this machine \(loopback\)/m,
      );
      // The sandbox verify used is gone from the host it came from.
      await vi.waitFor(() => expect(host.sandboxCounts().total).toBe(0), { timeout: 10_000, interval: 50 });
      expect(host.sandboxPids()).toEqual([]);
    });

    it('exits 3 without an image in cloud mode (no default there)', async () => {
      const { RF_SANDBOX_IMAGE: _image, ...noImage } = cloudEnv;
      const out = await verify([], noImage, cwd);
      expect(out.code).toBe(3);
      expect(out.stderr).toContain('verify: no image: pass --image or set RF_SANDBOX_IMAGE');
    });
  });
});
