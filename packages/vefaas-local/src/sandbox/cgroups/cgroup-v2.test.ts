/**
 * cgroup v2, against directory trees shaped like cgroupfs (the interface files the kernel would create are
 * written by the fixture), and against this machine's real v2 tree where one is mounted.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { startTestSandbox } from '../../../test/sandbox-fixture.js';
import { probeSandboxLimits } from '../limits-report.js';
import { cgroupHost, createSandboxCgroups, sandboxCgroupDirs } from './sandbox-cgroups.js';

const MB = 1024 * 1024;
const roots: string[] = [];

/** A fake cgroupfs: `dirs` maps a group path to the controllers its `cgroup.controllers` lists. */
async function fakeCgroupfs(dirs: Record<string, string>, procs: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rf-cgroup2-'));
  roots.push(root);
  for (const [path, controllers] of Object.entries(dirs)) {
    await mkdir(join(root, path), { recursive: true });
    await writeFile(join(root, path, 'cgroup.controllers'), `${controllers}\n`);
    await writeFile(join(root, path, 'cgroup.subtree_control'), '');
    await writeFile(join(root, path, 'cgroup.procs'), procs[path] ?? '');
  }
  return root;
}

const read = (path: string): Promise<string> => readFile(path, 'utf8');

afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

describe('cgroup v2 on a cgroupfs-shaped tree', () => {
  it('uses <root>/rollout-fleet when the root delegates, and writes memory.max, memory.swap.max, pids.max and cpu.max', async () => {
    const root = await fakeCgroupfs({
      '': 'cpuset cpu io memory hugetlb pids rdma misc',
      'rollout-fleet': 'cpu memory pids',
    });
    const host = await cgroupHost({ root, procSelfCgroup: '0::/user.slice/session.scope\n' });
    expect(host).toMatchObject({
      version: 'v2',
      parent: { dir: join(root, 'rollout-fleet'), controllers: ['memory', 'pids', 'cpu'] },
    });
    // One write enabling the controllers this host uses, in the parent of the sandbox groups and in the root.
    expect((await read(join(root, 'cgroup.subtree_control'))).split(' ').sort()).toEqual(['+cpu', '+memory', '+pids']);
    expect((await read(join(root, 'rollout-fleet', 'cgroup.subtree_control'))).split(' ').sort()).toEqual([
      '+cpu',
      '+memory',
      '+pids',
    ]);

    const groups = await createSandboxCgroups(
      { sandboxId: 'sb-1', memoryMB: 768, cpuMilli: 1500, maxProcesses: 99 },
      { root },
    );
    const dir = join(root, 'rollout-fleet', 'sb-1');
    expect(groups).toMatchObject({
      version: 'v2',
      memory: true,
      pids: true,
      cpu: true,
      procsFiles: [join(dir, 'cgroup.procs')],
    });
    expect(await read(join(dir, 'memory.max'))).toBe(String(768 * MB));
    expect(await read(join(dir, 'memory.swap.max'))).toBe('0');
    expect(await read(join(dir, 'pids.max'))).toBe('99');
    expect(await read(join(dir, 'cpu.max'))).toBe('150000 100000');
    expect(await sandboxCgroupDirs('sb-1', { root })).toEqual([dir]);

    const report = await probeSandboxLimits({ isolation: 'bwrap', cgroup: { root } });
    expect(report).toMatchObject({ cgroup: 'v2', cgroupParent: join(root, 'rollout-fleet'), unenforced: [] });
    expect(report.enforced).toEqual({
      memory: 'cgroup-v2',
      processes: 'cgroup-v2',
      cpu: 'cgroup-v2',
      disk: 'tmpfs-size',
    });
  });

  it('otherwise delegates from its own cgroup: moves its processes to a leaf, enables what it may, reports the rest', async () => {
    const own = 'user.slice/user-1000.slice/app.scope';
    // The root offers no controllers to a child we create (nothing is delegated there); our own cgroup offers two.
    const root = await fakeCgroupfs(
      { '': 'cpu memory pids', [own]: 'memory pids', [`${own}/rollout-fleet`]: 'memory pids' },
      { [own]: '4242\n4243\n' },
    );
    const host = await cgroupHost({ root, procSelfCgroup: `1:name=systemd:/x\n0::/${own}\n` });
    expect(host).toMatchObject({
      version: 'v2',
      parent: { dir: join(root, own, 'rollout-fleet'), controllers: ['memory', 'pids'] },
    });
    expect(host.notes).toEqual([expect.stringContaining(`${join(root, 'rollout-fleet')}: no controller`)]);
    // Every process of our cgroup went to the leaf (the fake file keeps the last write; the kernel keeps all).
    expect(await read(join(root, own, 'vefaas-local-host', 'cgroup.procs'))).toBe('4243');
    expect((await read(join(root, own, 'cgroup.subtree_control'))).split(' ').sort()).toEqual(['+memory', '+pids']);

    const report = await probeSandboxLimits({ isolation: 'bwrap', cgroup: { root } });
    expect(report.enforced).toEqual({ memory: 'cgroup-v2', processes: 'cgroup-v2', cpu: 'none', disk: 'tmpfs-size' });
    expect(report.unenforced).toEqual([
      {
        limit: 'cpu',
        fallback: 'none',
        why: `cpu controller: not enabled in ${join(root, own, 'rollout-fleet')}/cgroup.subtree_control`,
      },
    ]);
  });

  it('takes a delegated parent given in the options first', async () => {
    const root = await fakeCgroupfs({ '': 'cpu memory pids', 'admin/rf': 'cpu memory pids' });
    const parent = join(root, 'admin', 'rf');
    const host = await cgroupHost({ root, parent });
    expect(host).toMatchObject({ version: 'v2', parent: { dir: parent, controllers: ['memory', 'pids', 'cpu'] } });
    expect(existsSync(join(root, 'rollout-fleet'))).toBe(false);
  });

  it('says why when nothing can be delegated: every limit falls back and is reported', async () => {
    const root = await fakeCgroupfs({ '': 'cpu memory pids' });
    const report = await probeSandboxLimits({ isolation: 'bwrap', cgroup: { root, procSelfCgroup: '0::/\n' } });
    expect(report.cgroup).toBe('v2');
    expect(report.enforced).toEqual({ memory: 'rlimit-as', processes: 'none', cpu: 'none', disk: 'tmpfs-size' });
    expect(report.unenforced.map((u) => u.limit)).toEqual(['memory', 'processes', 'cpu']);
    expect(report.unenforced[1]?.why).toBe(
      'pids controller: no delegated cgroup v2 subtree is writable; a fork bomb is not contained',
    );
    expect(report.notes).toContain(
      'this process is in the root cgroup or its cgroup is unknown: nothing to delegate from',
    );
  });
});

describeWith([bwrapNeed()], 'cgroup v2 on a cgroupfs-shaped tree, with a real sandbox', () => {
  it('a real bubblewrap sandbox joins its v2 group before the jail starts', async () => {
    const root = await fakeCgroupfs({ '': 'cpu memory pids', 'rollout-fleet': 'cpu memory pids' });
    const fixture = await startTestSandbox({ memoryMB: 600, cpuMilli: 500, maxProcesses: 77, cgroup: { root } });
    try {
      expect(fixture.sandbox.limits).toEqual({
        memory: 'cgroup-v2',
        processes: 'cgroup-v2',
        cpu: 'cgroup-v2',
        disk: 'tmpfs-size',
      });
      const dir = join(root, 'rollout-fleet', fixture.sandbox.sandboxId);
      expect(await read(join(dir, 'memory.max'))).toBe(String(600 * MB));
      expect(await read(join(dir, 'cpu.max'))).toBe('50000 100000');
      // The launcher's shell wrote its own pid, then exec'd bwrap: the group's member is the sandbox's outer process.
      expect(Number((await read(join(dir, 'cgroup.procs'))).trim())).toBe(fixture.sandbox.pid);
      // No RLIMIT_AS fallback when the memory controller is there.
      expect(await read(`/proc/${fixture.sandbox.pid}/limits`)).toMatch(/Max address space\s+unlimited/);
    } finally {
      await fixture.cleanup();
    }
  });
});

const realV2 = existsSync('/sys/fs/cgroup/cgroup.controllers');

describe.runIf(realV2)('cgroup v2 on this machine', () => {
  it('creates a sandbox group whose limits read back from the kernel', async () => {
    const report = await probeSandboxLimits({ isolation: 'bwrap' });
    expect(report.cgroup).toBe('v2');
    const id = `t-${randomUUID().slice(0, 8)}`;
    const groups = await createSandboxCgroups({ sandboxId: id, memoryMB: 512, cpuMilli: 250, maxProcesses: 32 });
    try {
      if (groups?.memory)
        expect((await read(join((await sandboxCgroupDirs(id))[0]!, 'memory.max'))).trim()).toBe(String(512 * MB));
      if (groups?.pids) expect((await read(join((await sandboxCgroupDirs(id))[0]!, 'pids.max'))).trim()).toBe('32');
      expect(report.unenforced.filter((u) => u.limit !== 'disk').length === 0 || report.notes.length > 0).toBe(true);
    } finally {
      await groups?.remove();
    }
  });
});

// A hybrid host (cgroup v1 controllers plus a unified v2 mount that holds none of them, as on this kind of
// machine): the v2 code path runs against the kernel's real tree and must say which limits it cannot enforce
// there instead of claiming them. The own cgroup is given as the root one, so the search never moves this
// process between real cgroups.
const HYBRID_UNIFIED = '/sys/fs/cgroup/unified';
const hybridV2 = !realV2 && existsSync(join(HYBRID_UNIFIED, 'cgroup.controllers'));

describe.runIf(hybridV2)('cgroup v2 on the unified mount of this hybrid host (a real kernel tree)', () => {
  it('finds no delegatable controller there and reports every limit that would go unenforced, leaving nothing behind', async () => {
    const controllers = (await read(join(HYBRID_UNIFIED, 'cgroup.controllers'))).split(/\s+/);
    // What the kernel offers decides the expectation: none of memory, pids, cpu on a hybrid unified mount.
    expect(controllers.filter((c) => ['memory', 'pids', 'cpu'].includes(c))).toEqual([]);
    const cgroup = { root: HYBRID_UNIFIED, procSelfCgroup: '0::/\n' };
    const report = await probeSandboxLimits({ isolation: 'none', cgroup });
    expect(report.cgroup).toBe('v2');
    expect(report.enforced).toMatchObject({ memory: 'rlimit-as', processes: 'none', cpu: 'none' });
    expect(report.unenforced.map((u) => u.limit)).toEqual(expect.arrayContaining(['memory', 'processes', 'cpu']));
    expect(report.unenforced.find((u) => u.limit === 'processes')?.why).toBe(
      'pids controller: no delegated cgroup v2 subtree is writable; a fork bomb is not contained',
    );
    expect(report.notes.join('\n')).toMatch(
      /rollout-fleet: (no controller of memory, pids, cpu can be enabled|.*(EACCES|EROFS|EPERM))/,
    );
    // The kernel's tree is as it was: the unusable parent directory was removed again.
    expect(existsSync(join(HYBRID_UNIFIED, 'rollout-fleet'))).toBe(false);
    expect(
      await createSandboxCgroups(
        { sandboxId: `t-${randomUUID().slice(0, 8)}`, memoryMB: 64, cpuMilli: 100, maxProcesses: 8 },
        cgroup,
      ),
    ).toMatchObject({ version: 'v2', memory: false, pids: false, cpu: false });
  });
});
