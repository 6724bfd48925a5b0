/** Memory and process limits are enforced on the whole sandbox (cgroup v1 on this machine). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type SandboxFixture } from '../../test/sandbox-fixture.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { RexCaller } from '@rollout-fleet/test-kit/swerex-conformance';

describeWith([bwrapNeed()], 'resource limits of a bubblewrap sandbox', () => {
  const MAX_PROCESSES = 48;
  let fixture: SandboxFixture;
  let rex: RexCaller;
  beforeAll(async () => {
    fixture = await startTestSandbox({ memoryMB: 512, cpuMilli: 500, maxProcesses: MAX_PROCESSES });
    rex = new RexCaller(fixture.target);
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  describe('limits', () => {
    it('reports how each limit is enforced', () => {
      expect(fixture.sandbox.limits.memory).toMatch(/^(cgroup-v1|rlimit-as)$/);
    });

    it('a 1 GiB allocation fails with memoryMB 512, a 200 MiB one works, and the server survives', async () => {
      expect((await rex.execute(['python3', '-c', "b = b'x' * (200 << 20); print(len(b))"])).stdout).toBe(
        `${200 << 20}\n`,
      );
      const big = await rex.execute(['python3', '-c', "b = b'x' * (1 << 30); print(len(b))"]);
      expect(big.stdout).toBe('');
      // cgroup OOM killer → SIGKILL (-9); RLIMIT_AS → MemoryError (exit 1).
      expect(fixture.sandbox.limits.memory === 'cgroup-v1' ? -9 : 1).toBe(big.exit_code);
      expect(await rex.ok('/is_alive')).toEqual({ is_alive: true, message: '' });
    });

    it('bounds the number of processes: a fork bomb cannot exceed maxProcesses', async () => {
      if (fixture.sandbox.limits.processes !== 'cgroup-v1') return;
      const bomb = [
        'import os, time',
        'n = 0',
        'for _ in range(500):',
        '    try:',
        '        pid = os.fork()',
        '    except OSError:',
        '        break',
        '    if pid == 0:',
        '        os.close(1); os.close(2)  # let /execute see EOF while the children live on',
        '        time.sleep(60)',
        '        os._exit(0)',
        '    n += 1',
        'print(n, flush=True)',
      ].join('\n');
      const result = await rex.execute(['python3', '-c', bomb], { timeout: 30 });
      const forked = Number(result.stdout);
      expect(forked).toBeGreaterThan(0);
      expect(forked).toBeLessThan(MAX_PROCESSES);
      expect((await fixture.sandbox.listPids()).length).toBeLessThanOrEqual(MAX_PROCESSES);
      // The classic shell bomb, bounded by the same limit; kill() in afterAll must still clean it all up.
      const shellBomb = await rex.raw('/execute', { command: ':(){ :|:& };: 2>/dev/null', shell: true, timeout: 2 });
      expect([200, 511]).toContain(shellBomb.status);
      expect((await fixture.sandbox.listPids()).length).toBeLessThanOrEqual(MAX_PROCESSES);
    });
  });
});
