/**
 * From inside a bubblewrap sandbox: nothing of the host or of other sandboxes can be reached through it
 * (docs/adversarial-grading.md, "Never 0 for infra" and item 6 of issue 24). The SWE-ReX token is on no argv,
 * in no environment and in no memory a sandbox process can read (it came on a pipe, the server is non-dumpable);
 * no host directory is writable inside — not even the socket directory, which is not mounted at all (the server
 * serves a socket bound outside) — so no file, and no unlinked-but-open file, lands on the host's disk; and no
 * host path (the state directory, the host's socket) is visible.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestSandbox, type SandboxFixture } from '../../test/sandbox-fixture.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { RexCaller } from '@rollout-fleet/test-kit/swerex-conformance';

describeWith([bwrapNeed()], 'a bubblewrap sandbox and the host', () => {
  let fixture: SandboxFixture;
  let rex: RexCaller;
  beforeAll(async () => {
    fixture = await startTestSandbox();
    rex = new RexCaller(fixture.target);
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  it('the SWE-ReX token is in no argv, environment or process memory a sandbox process can read', async () => {
    const token = fixture.sandbox.authToken;
    expect(token.length).toBeGreaterThan(8);
    // Every process's argv and environment, and the server's memory.
    const probe = [
      'import os, re',
      `token = ${JSON.stringify(token)}.encode()`,
      'found, denied, read = [], [], []',
      "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:",
      "    for what in ('cmdline', 'environ'):",
      '        try:',
      "            if token in open(f'/proc/{pid}/{what}', 'rb').read(): found.append(f'{pid}/{what}')",
      '        except OSError:',
      "            denied.append(f'{pid}/{what}')",
      // The server itself (python running swerex_server.py), not bubblewrap's init whose argv names it too.
      "argvs = {p: open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0') for p in os.listdir('/proc') if p.isdigit()}",
      "server = next(p for p, a in argvs.items() if b'python' in a[0] and any(x.endswith(b'swerex_server.py') for x in a))",
      'try:',
      "    maps = open(f'/proc/{server}/maps').read().splitlines()",
      "    mem = open(f'/proc/{server}/mem', 'rb')",
      '    for line in maps:',
      "        lo, hi = (int(x, 16) for x in line.split()[0].split('-'))",
      "        if 'rw' not in line.split()[1]: continue",
      '        try:',
      '            mem.seek(lo)',
      '            chunk = mem.read(hi - lo)',
      '            read.append(line.split()[0])',
      "            if token in chunk: found.append(f'{server}/mem')",
      '        except OSError:',
      '            pass',
      "    if not read: denied.append(f'{server}/mem')",
      'except OSError as e:',
      "    denied.append(f'{server}/mem {e.errno}')",
      "print('FOUND', found)",
      "print('DENIED', denied)",
    ].join('\n');
    await rex.ok('/write_file', { path: '/tmp/probe.py', content: probe });
    const out = await rex.sh('python3 /tmp/probe.py');
    expect(out).toContain('FOUND []');
    // The server's own memory is closed to the sandbox (non-dumpable), not merely searched without luck.
    expect(out).toMatch(/DENIED .*mem/);
  });

  it('no host directory is writable inside: every writable mount is the jail’s own tmpfs (or /proc, /dev)', async () => {
    const mounts = await rex.sh('cat /proc/self/mountinfo');
    const writable = mounts
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        const [left, right] = l.split(' - ');
        const fields = (left ?? '').split(' ');
        return { point: fields[4], options: fields[5] ?? '', fstype: (right ?? '').split(' ')[0] };
      })
      .filter((m) => m.options.split(',').includes('rw'));
    const hostBacked = writable.filter(
      (m) => !['tmpfs', 'proc', 'devtmpfs', 'devpts', 'mqueue'].includes(m.fstype ?? ''),
    );
    expect(hostBacked).toEqual([]);
    // The socket directory the host reaches is not in the jail at all.
    expect(await rex.sh('ls -d /run/swerex 2>&1 || true')).toContain('No such file or directory');
  });

  it('an unlinked-but-open file grows only the jail’s own tmpfs, never the host’s socket directory', async () => {
    await rex.sh(
      "python3 -c \"import os; f=open('/tmp/big','wb'); os.unlink('/tmp/big'); f.write(b'x'*(8<<20)); f.flush(); print('wrote')\" || true",
    );
    // The host's socket directory still holds the socket only.
    expect(readdirSync(`${fixture.sandbox.stateDir}/run`)).toEqual(['swerex.sock']);
  });

  it('no host path is visible: not the state directory, the host socket, the runtime’s host path or this checkout', async () => {
    const paths = [fixture.sandbox.stateDir, fixture.sandbox.socketPath, fixture.sandbox.logPath, process.cwd()];
    for (const path of paths) expect(existsSync(path), path).toBe(true);
    const out = await rex.sh(
      paths.map((p) => `ls -d ${JSON.stringify(p)} >/dev/null 2>&1 && echo "SEEN ${p}"`).join('; ') + '; true',
    );
    expect(out).not.toContain('SEEN');
    // Nor does any process's environment or argv inside name them.
    // (The needle goes in a file: on a command line it would find itself.)
    await rex.ok('/write_file', { path: '/tmp/needle', content: fixture.sandbox.stateDir });
    const grep = await rex.sh(
      `for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null | grep -q -F -f /tmp/needle && echo "$f"; done; true`,
    );
    expect(grep.trim()).toBe('');
  });
});
