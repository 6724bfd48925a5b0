/**
 * The limits hold where it matters: through a real host (control plane, gateway, bubblewrap sandboxes), a fork
 * bomb, a memory hog and a disk filler each run in their own sandbox at the same time, and another sandbox
 * keeps answering within seconds throughout. Sized for a shared 2-core machine: 0.5 core, 512 MB, 96 processes
 * and 48 MB of writable space per sandbox, every sandbox killed at the end.
 */
import { randomUUID } from 'node:crypto';
import { statfsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeSharedDispatchers, dispatcherFor } from '@rollout-fleet/sandbox';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { startVefaasLocal, type VefaasLocalHandle } from './host.js';
import { sandboxCgroupDirs } from './sandbox/cgroups/sandbox-cgroups.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { dispatcherTarget, RexCaller } from '@rollout-fleet/test-kit/swerex-conformance';
import { okResult, swerexCommand } from '../test/control-plane-caller.js';
import { makeImageTemplate } from '../test/sandbox-fixture.js';

const MB = 1024 * 1024;
const MAX_PROCESSES = 96;
const DISK_MB = 48;

let host: VefaasLocalHandle;
let imageDir: string;

interface Sandbox {
  id: string;
  rex: RexCaller;
}

async function createSandbox(): Promise<Sandbox> {
  const token = randomUUID();
  const { SandboxId } = await okResult<{ SandboxId: string }>(host, 'CreateSandbox', {
    FunctionId: host.functionId,
    MemoryMB: 512,
    CpuMilli: 500,
    InstanceImageInfo: { Image: `file:${imageDir}`, Command: swerexCommand(token), Port: 8000 },
  });
  const route = new URL(host.gatewayUrl);
  const target = dispatcherTarget({
    origin: route.origin,
    dispatcher: dispatcherFor(route.origin),
    authToken: token,
    headers: { 'x-faas-instance-name': SandboxId },
    pathPrefix: route.pathname,
  });
  return { id: SandboxId, rex: new RexCaller(target) };
}

/** The sandbox's status as the control plane reports it. */
async function sandboxStatus(id: string): Promise<string> {
  const { Status } = await okResult<{ Status: string }>(host, 'DescribeSandbox', {
    FunctionId: host.functionId,
    SandboxId: id,
  });
  return Status;
}

describeWith([bwrapNeed()], 'sandbox limits', () => {
  beforeAll(async () => {
    imageDir = await makeImageTemplate();
    host = await startVefaasLocal({ isolation: 'bwrap', sandboxDiskMB: DISK_MB, sandboxMaxProcesses: MAX_PROCESSES });
  });

  afterAll(async () => {
    await closeSharedDispatchers();
    await host?.close();
    if (imageDir) await rm(imageDir, { recursive: true, force: true });
  });

  describe('under attack', () => {
    it('contains a fork bomb, a memory hog and a disk filler while a bystander keeps being served', async () => {
      // Never run a bomb this host cannot contain: fail instead.
      expect(host.limits?.enforced).toMatchObject({
        processes: expect.stringMatching(/^cgroup-v[12]$/),
        memory: expect.stringMatching(/^cgroup-v[12]$/),
        disk: 'tmpfs-size',
      });
      const [bomb, hog, filler, bystander] = await Promise.all([
        createSandbox(),
        createSandbox(),
        createSandbox(),
        createSandbox(),
      ]);
      const freeBefore = statfsSync(tmpdir()).bavail * statfsSync(tmpdir()).bsize;

      const attacks = Promise.all([
        // The classic shell bomb; /execute gives up after 5 s, the bomb goes on (bounded) until the sandbox dies.
        bomb!.rex.raw('/execute', {
          command: ['bash', '-c', 'bomb() { bomb | bomb & }; bomb 2>/dev/null'],
          shell: false,
          timeout: 5,
        }),
        hog!.rex.execute(['python3', '-c', "b = bytearray(2 << 30); print('allocated')"], { timeout: 30 }),
        filler!.rex.execute(
          'dd if=/dev/zero of=/testbed/fill bs=1M count=2000 2>&1; dd if=/dev/zero of=/tmp/fill bs=1M count=2000 2>&1; ls -l /testbed/fill /tmp/fill',
          { timeout: 30 },
        ),
      ]);
      // While they run, the bystander answers every call within a few seconds, and so does the host.
      let answered = 0;
      let attacking = true;
      const bystanding = (async () => {
        while (attacking) {
          const started = Date.now();
          expect(await bystander!.rex.sh('echo alive')).toBe('alive\n');
          expect(Date.now() - started).toBeLessThan(5_000);
          answered += 1;
        }
      })();
      const [bombed, hogged, filled] = await attacks;
      attacking = false;
      await bystanding;
      expect(answered).toBeGreaterThan(0);

      expect(bombed.status).toBeLessThan(600);
      // The bomb ran into the pids limit (the kernel counts refused forks in pids.events) and stays under it.
      const pidsDir =
        (await sandboxCgroupDirs(bomb!.id)).find((dir) => dir.includes('/pids/')) ??
        (await sandboxCgroupDirs(bomb!.id))[0]!;
      await vi.waitFor(
        async () =>
          expect(Number(/max (\d+)/.exec(await readFile(join(pidsDir, 'pids.events'), 'utf8'))?.[1])).toBeGreaterThan(
            0,
          ),
        { timeout: 10_000, interval: 100 },
      );
      expect(Number(await readFile(join(pidsDir, 'pids.current'), 'utf8'))).toBeLessThanOrEqual(MAX_PROCESSES);
      // The memory hog is killed by the kernel (SIGKILL from the cgroup OOM killer), the server survives it.
      expect(hogged).toMatchObject({ stdout: '', exit_code: -9 });
      expect(await hog!.rex.sh('echo still here')).toBe('still here\n');
      // The disk filler stops at the quota with ENOSPC; the host's disk did not pay for it.
      expect(filled.stdout).toMatch(/No space left on device[\s\S]*No space left on device/);
      const sizes = [
        ...String(filled.stdout).matchAll(/^\S+\s+\d+\s+\S+\s+\S+\s+(\d+)\s.*\/(testbed|tmp)\/fill$/gm),
      ].map((m) => Number(m[1]));
      expect(sizes).toHaveLength(2);
      for (const size of sizes) expect(size).toBeLessThanOrEqual(DISK_MB * MB);
      const freeAfter = statfsSync(tmpdir()).bavail * statfsSync(tmpdir()).bsize;
      // Uncontained, that was 4 GB; other processes on the machine may write a little meanwhile.
      expect(freeBefore - freeAfter).toBeLessThan(1024 * MB);

      const health = await request(`${host.controlPlaneUrl}/healthz`);
      expect(await health.body.json()).toMatchObject({ ok: true, limits: { unenforced: [] } });
      for (const sandbox of [bomb, hog, filler, bystander]) expect(await sandboxStatus(sandbox!.id)).toBe('Ready');
    });

    it('contains the classic bash fork bomb typed into the bash session, as a replayed step runs it', async () => {
      const [bomb, bystander] = await Promise.all([createSandbox(), createSandbox()]);
      await bomb.rex.createSession('main');
      // `:(){ :|:& };:` in the session the model types into; the step's timeout ends the wait, not the bomb.
      const stepping = bomb.rex.raw('/run_in_session', {
        session: 'main',
        command: ':(){ :|:& };:',
        action_type: 'bash',
        timeout: 5,
      });
      const pidsDir =
        (await sandboxCgroupDirs(bomb.id)).find((dir) => dir.includes('/pids/')) ??
        (await sandboxCgroupDirs(bomb.id))[0]!;
      // The kernel refuses the bomb's forks at the limit (pids.events counts them) ...
      await vi.waitFor(
        async () =>
          expect(Number(/max (\d+)/.exec(await readFile(join(pidsDir, 'pids.events'), 'utf8'))?.[1])).toBeGreaterThan(
            0,
          ),
        { timeout: 20_000, interval: 100 },
      );
      // ... while the bystander and the control plane keep answering within seconds.
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        expect(await bystander.rex.sh('echo alive')).toBe('alive\n');
        expect(await sandboxStatus(bomb.id)).toBe('Ready');
        expect(Date.now() - started).toBeLessThan(5_000);
      }
      expect((await stepping).status).toBeLessThan(600);
      expect(Number(await readFile(join(pidsDir, 'pids.current'), 'utf8'))).toBeLessThanOrEqual(MAX_PROCESSES);
      // Killing the sandbox ends the bomb: its group empties.
      await okResult(host, 'KillSandbox', { FunctionId: host.functionId, SandboxId: bomb.id });
      await vi.waitFor(
        async () => expect(Number(await readFile(join(pidsDir, 'pids.current'), 'utf8').catch(() => '0'))).toBe(0),
        { timeout: 20_000, interval: 200 },
      );
    });

    it('has no socket directory to write into: the socket is bound outside the jail, nothing of the host is writable', async () => {
      const sandbox = await createSandbox();
      const out = await sandbox.rex.sh(`head -c ${2 * MB} /dev/zero > /run/swerex/fill 2>&1; echo "rc=$?"`);
      expect(out).toMatch(/rc=[1-9]/);
      expect(await sandboxStatus(sandbox.id)).toBe('Ready');
    });
  });
});
