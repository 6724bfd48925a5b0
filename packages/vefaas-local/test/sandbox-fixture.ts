/** Test helper: an image template (a file + a git repo) and a running sandbox reachable over its socket. */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, vi } from 'vitest';
import { isSwerexAlive } from '../src/sandbox/alive-probe.js';
import { launchSandbox } from '../src/sandbox/launch-sandbox.js';
import type { SandboxLaunch, SandboxProcess } from '../src/sandbox/types.js';
import { socketTarget, type SwerexConformanceTarget } from '@rollout-fleet/test-kit/swerex-conformance';

const run = promisify(execFile);

/** A template dir: `hello.txt` and a committed git repository at its root (so /testbed is a repo). */
export async function makeImageTemplate(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rf-img-'));
  await writeFile(join(dir, 'hello.txt'), 'hello from the image\n');
  await writeFile(join(dir, 'module.py'), 'def answer():\n    return 42\n');
  const git = (...args: string[]) =>
    run('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd: dir });
  await git('init', '-q');
  await git('add', '.');
  await git('commit', '-q', '-m', 'initial');
  return dir;
}

export interface SandboxFixture {
  sandbox: SandboxProcess;
  target: SwerexConformanceTarget & { close(): Promise<void> };
  imageDir: string;
  stateRoot: string;
  cleanup(): Promise<void>;
}

export async function waitUntilAlive(sandbox: SandboxProcess, timeoutMs = 20_000): Promise<void> {
  await vi.waitFor(
    async () =>
      expect(
        await isSwerexAlive({ socketPath: sandbox.socketPath, authToken: sandbox.authToken, timeoutMs: 1000 }),
      ).toBe(true),
    {
      timeout: timeoutMs,
      interval: 10,
    },
  );
}

export async function startTestSandbox(overrides: Partial<SandboxLaunch> = {}): Promise<SandboxFixture> {
  const imageDir = await makeImageTemplate();
  const stateRoot = await mkdtemp(join(tmpdir(), 'rf-sb-'));
  const token = randomUUID();
  const sandbox = await launchSandbox({
    sandboxId: `t-${randomUUID().slice(0, 8)}`,
    command: `python3 -m swerex.server --auth-token ${token}`,
    imageDir,
    envs: { HOME: '/root', PIP_PROGRESS_BAR: 'off' },
    memoryMB: 1024,
    cpuMilli: 2000,
    network: false,
    isolation: 'bwrap',
    stateRoot,
    ...overrides,
  });
  await waitUntilAlive(sandbox);
  const target = socketTarget(sandbox.socketPath, sandbox.authToken);
  return {
    sandbox,
    target,
    imageDir,
    stateRoot,
    async cleanup() {
      await target.close().catch(() => undefined);
      await sandbox.kill();
      await rm(imageDir, { recursive: true, force: true });
      await rm(stateRoot, { recursive: true, force: true });
    },
  };
}
