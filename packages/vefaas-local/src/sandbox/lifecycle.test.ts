/** kill() and parent death leave no process behind; auth can be disabled; isolation 'none' works too. */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith, itWith } from '@rollout-fleet/test-kit/needs';
import { RexCaller, socketTarget } from '@rollout-fleet/test-kit/swerex-conformance';
import { makeImageTemplate, startTestSandbox, waitUntilAlive } from '../../test/sandbox-fixture.js';
import { launchSandbox } from './launch-sandbox.js';
import { removeSandboxLeftovers } from './leftovers.js';
import { isAlive } from './process-tree.js';

const stillThere = (pids: number[]) => pids.filter((pid) => existsSync(`/proc/${pid}`));

describeWith([bwrapNeed()], 'kill()', () => {
  it('kills every process of the sandbox (including background jobs), removes the state dir, and is idempotent', async () => {
    const fixture = await startTestSandbox();
    const rex = new RexCaller(fixture.target);
    await rex.createSession('default');
    await rex.run('default', 'sleep 1000 &');
    await rex.execute('sleep 1001 >/dev/null 2>&1 &');
    const pids = await fixture.sandbox.listPids();
    expect(pids.length).toBeGreaterThanOrEqual(5); // bwrap, its init, python, bash, sleep x2
    expect(pids).toContain(fixture.sandbox.pid);
    await fixture.target.close();
    await fixture.sandbox.kill();
    await vi.waitFor(() => expect(stillThere(pids)).toEqual([]), { timeout: 10_000, interval: 20 });
    expect(existsSync(fixture.sandbox.stateDir)).toBe(false);
    expect(Object.keys(await fixture.sandbox.exited).sort()).toEqual(['code', 'signal']);
    await fixture.sandbox.kill();
    await fixture.cleanup();
  });
});

describeWith([bwrapNeed()], 'parent death', () => {
  it('takes the whole sandbox down when the launching process is SIGKILLed', async () => {
    const stateRoot = await mkdtemp(join(tmpdir(), 'rf-sb-'));
    const imageDir = await makeImageTemplate();
    const sandboxId = `orphan-${randomUUID().slice(0, 8)}`;
    const script = fileURLToPath(new URL('../../test/orphan-launcher.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, stateRoot, sandboxId, imageDir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [line] =
      (await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next()).value?.split('\n') ?? [];
    const { pids } = JSON.parse(line ?? '{}') as { pids: number[] };
    expect(pids.length).toBeGreaterThanOrEqual(5);
    expect(stillThere(pids)).toEqual(pids);
    child.kill('SIGKILL');
    // The jail's init ends up a zombie of the host's pid 1 here, so /proc/<pid> can take a few seconds to go.
    await vi.waitFor(() => expect(stillThere(pids)).toEqual([]), { timeout: 20_000, interval: 50 });
    await removeSandboxLeftovers({ stateRoot, sandboxId });
    expect(existsSync(join(stateRoot, sandboxId))).toBe(false);
    await rm(stateRoot, { recursive: true, force: true });
    await rm(imageDir, { recursive: true, force: true });
  });
});

describe('launch options', () => {
  itWith([bwrapNeed()], 'disables auth when the command carries no token', async () => {
    const fixture = await startTestSandbox({ command: 'python3 -m swerex.server' });
    expect(fixture.sandbox.authToken).toBe('');
    const rex = new RexCaller(fixture.target);
    expect(await rex.ok('/', undefined, { apiKey: false })).toEqual({ message: 'hello world' });
    expect(await rex.ok('/is_alive', undefined, { apiKey: 'anything' })).toEqual({ is_alive: true, message: '' });
    await fixture.cleanup();
  });

  it("runs without isolation ('none') with a private HOME and the testbed as cwd, seen as /root and /testbed", async () => {
    const stateRoot = await mkdtemp(join(tmpdir(), 'rf-sb-'));
    const imageDir = await makeImageTemplate();
    const sandbox = await launchSandbox({
      sandboxId: `none-${randomUUID().slice(0, 8)}`,
      command: 'x --auth-token=tok',
      imageDir,
      envs: { MY_ENV: 'v' },
      memoryMB: 512,
      cpuMilli: 1000,
      network: false,
      isolation: 'none',
      stateRoot,
    });
    await waitUntilAlive(sandbox);
    const target = socketTarget(sandbox.socketPath, 'tok');
    const rex = new RexCaller(target);
    // The server translates /testbed and /root both ways: the host directories never show, the aliases work.
    expect(await rex.sh('pwd; echo $HOME $MY_ENV $TERM; cat hello.txt')).toBe(
      '/testbed\n/root v dumb\nhello from the image\n',
    );
    expect(await rex.sh('cat /testbed/hello.txt; cd /root && pwd; ls -d /testbedx 2>&1 | head -c 0')).toBe(
      'hello from the image\n/root\n',
    );
    await rex.ok('/write_file', { path: '/testbed/sub/new.txt', content: 'written at /testbed/sub\n' });
    expect(await readFile(join(sandbox.stateDir, 'testbed', 'sub', 'new.txt'), 'utf8')).toBe(
      `written at ${sandbox.stateDir}/testbed/sub\n`,
    );
    expect(await rex.ok('/read_file', { path: '/testbed/sub/new.txt' })).toEqual({
      content: 'written at /testbed/sub\n',
    });
    // Its own /tmp, not the host's (concurrent sandboxes write the same /tmp paths).
    await rex.sh('echo mine > /tmp/rf-alias-probe');
    expect(existsSync('/tmp/rf-alias-probe')).toBe(false);
    expect(await readFile(join(sandbox.stateDir, 'tmp', 'rf-alias-probe'), 'utf8')).toBe('mine\n');
    await rex.execute('sleep 1000 >/dev/null 2>&1 &');
    const pids = await sandbox.listPids();
    await target.close();
    await sandbox.kill();
    // Without a pid namespace, killed children are reaped by the host's pid 1: check they no longer run.
    for (const pid of pids) expect(await isAlive(pid), `pid ${pid}`).toBe(false);
    await rm(stateRoot, { recursive: true, force: true });
    await rm(imageDir, { recursive: true, force: true });
  });
});
