import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startVefaasLocal, type VefaasLocalHandle } from './host.js';
import { callAction, okResult, swerexCommand } from '../test/control-plane-caller.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';

const TOKEN = 'real-token';

/** Every live descendant of `root` (plus root), read from /proc. */
async function processTree(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // exited while we looked
    }
  }
  const tree = parents.has(root) ? [root] : [];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

/** Alive and not a zombie (zombies re-parented to a non-reaping pid 1 linger in containers). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describeWith([bwrapNeed()], 'vefaas-local with real bubblewrap sandboxes', () => {
  let host: VefaasLocalHandle;
  let imagesDir: string;

  beforeAll(async () => {
    imagesDir = await mkdtemp(join(tmpdir(), 'vl-images-'));
    host = await startVefaasLocal({ isolation: 'bwrap', imagesDir });
  });
  afterAll(async () => {
    await host.close();
    await rm(imagesDir, { recursive: true, force: true });
  });

  const create = (extra: Record<string, unknown> = {}) =>
    okResult<{ SandboxId: string }>(host, 'CreateSandbox', {
      FunctionId: host.functionId,
      InstanceImageInfo: { Command: swerexCommand(TOKEN), Port: 8000 },
      ...extra,
    });

  const pidOf = async (sandboxId: string): Promise<number> => {
    const sandboxes = (await (await request(`${host.controlPlaneUrl}/_admin/sandboxes`)).body.json()) as {
      sandboxes: Array<{ id: string; pid: number | null }>;
    };
    const pid = sandboxes.sandboxes.find((s) => s.id === sandboxId)?.pid;
    expect(pid).toBeTypeOf('number');
    return pid as number;
  };

  it('starts a sandbox that is Ready on return and serves SWE-ReX through the gateway; kill leaves no process', async () => {
    const { SandboxId } = await create();
    expect((await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId }))['Status']).toBe(
      'Ready',
    );
    const headers = { 'x-faas-instance-name': SandboxId, 'x-api-key': TOKEN, 'content-type': 'application/json' };
    const alive = await request(`${host.gatewayUrl}/is_alive`, { headers });
    expect(await alive.body.json()).toEqual({ is_alive: true, message: '' });
    const executed = await request(`${host.gatewayUrl}/execute`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ command: 'sleep 30 >/dev/null 2>&1 & echo started', shell: true }),
    });
    expect(await executed.body.json()).toMatchObject({ stdout: 'started\n', exit_code: 0 });

    const tree = await processTree(await pidOf(SandboxId));
    expect(tree.length).toBeGreaterThan(1);
    await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId });
    await vi.waitFor(
      async () => {
        const { status } = await callAction(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId });
        expect(status).toBe(404);
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(tree.filter(isRunning)).toEqual([]);
  });

  it('expires a real sandbox at ExpireAt and kills its processes', async () => {
    const { SandboxId } = await create({ Timeout: 2, TimeoutUnit: 'second' });
    const tree = await processTree(await pidOf(SandboxId));
    await vi.waitFor(
      async () => {
        const { status } = await callAction(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId });
        expect(status).toBe(404);
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(tree.filter(isRunning)).toEqual([]);
  });

  it('reports instance death: processes killed, gateway 404, Describe Failed', async () => {
    const { SandboxId } = await create();
    const pid = await pidOf(SandboxId);
    const killed = await request(`${host.controlPlaneUrl}/_admin/sandboxes/${SandboxId}/kill-instance`, {
      method: 'POST',
    });
    expect(killed.statusCode).toBe(200);
    await killed.body.dump();
    expect(isRunning(pid)).toBe(false);
    const dead = await request(`${host.gatewayUrl}/is_alive`, {
      headers: { 'x-faas-instance-name': SandboxId, 'x-api-key': TOKEN },
    });
    expect(dead.statusCode).toBe(404);
    await dead.body.dump();
    expect(await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId })).toMatchObject({
      Status: 'Failed',
      ErrorCode: 'function_health_check_failed',
    });
    await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId });
  });

  it('fails an unknown image with function_initialize_failed and starts no process', async () => {
    const before = host.sandboxPids().length;
    const { SandboxId } = await create({
      InstanceImageInfo: { Image: 'registry/swe:missing', Command: swerexCommand(TOKEN) },
    });
    expect(await okResult(host, 'DescribeSandbox', { FunctionId: host.functionId, SandboxId })).toMatchObject({
      Status: 'Failed',
      ErrorCode: 'function_initialize_failed',
    });
    expect(host.sandboxPids().length).toBe(before);
  });

  it('close() kills every sandbox process', async () => {
    const other = await startVefaasLocal({ isolation: 'bwrap' });
    await okResult(other, 'CreateSandbox', {
      FunctionId: other.functionId,
      InstanceImageInfo: { Command: swerexCommand(TOKEN) },
    });
    await okResult(other, 'CreateSandbox', {
      FunctionId: other.functionId,
      InstanceImageInfo: { Command: swerexCommand(TOKEN) },
    });
    const trees = (await Promise.all(other.sandboxPids().map(processTree))).flat();
    expect(trees.length).toBeGreaterThanOrEqual(2);
    await other.close();
    expect(trees.filter(isRunning)).toEqual([]);
    expect(other.liveSandboxes()).toBe(0);
  });
});
