/** Escape attempts from inside the bubblewrap jail all fail; the sandbox's own space works. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type SandboxFixture } from '../../test/sandbox-fixture.js';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { RexCaller } from '@rollout-fleet/test-kit/swerex-conformance';

describeWith([bwrapNeed()], 'escape attempts from a bubblewrap sandbox', () => {
  let fixture: SandboxFixture;
  let rex: RexCaller;
  beforeAll(async () => {
    fixture = await startTestSandbox();
    rex = new RexCaller(fixture.target);
  });
  afterAll(async () => {
    await fixture?.cleanup();
  });

  function hostPortOpen(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }

  describe('inside the jail', () => {
    it('sees the image at /testbed (git history intact), HOME=/root and cwd /testbed', async () => {
      expect(await rex.sh('cat /testbed/hello.txt; git -C /testbed log --oneline | wc -l; echo $HOME; pwd')).toBe(
        'hello from the image\n1\n/root\n/testbed\n',
      );
      expect(await rex.ok('/read_file', { path: '/testbed/module.py' })).toEqual({
        content: 'def answer():\n    return 42\n',
      });
    });

    it('cannot read host files outside the jail', async () => {
      // This checkout's own package.json: a host file that certainly exists, wherever the checkout is.
      const hostFile = fileURLToPath(new URL('../../../../package.json', import.meta.url));
      expect(existsSync(hostFile)).toBe(true);
      const work = await rex.fails('/read_file', { path: hostFile });
      expect(work.class_path).toBe('builtins.FileNotFoundError');
      // A file of the host's /root (whichever this machine has): the jail's /root is its own.
      const hostHome = ['/root/.bashrc', '/root/.profile'].find((path) => existsSync(path));
      expect(hostHome).toBeDefined();
      const homeFile = await rex.fails('/read_file', { path: hostHome! });
      expect(homeFile.class_path).toBe('builtins.FileNotFoundError');
      expect((await rex.execute('ls /home /work /sys 2>&1; cat /etc/shadow | wc -c')).stdout).toMatch(
        /No such file or directory[\s\S]*No such file or directory[\s\S]*No such file or directory[\s\S]*^0$/m,
      );
    });

    it('cannot write outside /testbed, /tmp and /root', async () => {
      for (const path of [
        '/usr/escape',
        '/etc/escape',
        '/escape',
        '/opt/escape',
        '/opt/swerex-local/escape',
        '/run/escape',
        '/bin/escape',
      ]) {
        const result = await rex.fails('/write_file', { path, content: 'x' });
        expect(['builtins.OSError', 'builtins.PermissionError', 'builtins.FileNotFoundError'], path).toContain(
          result.class_path,
        );
      }
      for (const path of ['/testbed/ok.txt', '/tmp/ok.txt', '/root/ok.txt'])
        expect(await rex.ok('/write_file', { path, content: 'ok' })).toEqual({});
      // The writable places are the jail's own tmpfs mounts: nothing written there lands on the host's disk.
      expect(await rex.sh('df --output=fstype /testbed /tmp /root | tail -n +2')).toBe('tmpfs\ntmpfs\ntmpfs\n');
      expect(existsSync(`${fixture.sandbox.stateDir}/testbed/ok.txt`)).toBe(false);
    });

    it('sees only the parts of /etc the runtime needs, with its own passwd, group and hosts', async () => {
      const etc = (await rex.sh('ls -A /etc')).trim().split('\n');
      const allowed =
        /^(alternatives|bash\.bashrc|ca-certificates(\.conf)?|debian_version|gai\.conf|host\.conf|inputrc|ld\.so\.(cache|conf|conf\.d)|locale\.alias|localtime|magic(\.mime)?|mime\.types|nsswitch\.conf|os-release|pki|profile|protocols|services|shells|ssl|terminfo|timezone|python3(\.\d+)?|passwd|group|hosts)$/;
      expect(etc.filter((name) => !allowed.test(name))).toEqual([]);
      expect(await rex.sh('ls -A /etc/ssl')).not.toMatch(/private/);
      expect((await rex.execute('ls /etc/ssh /etc/shadow /etc/sudoers 2>&1')).stdout).not.toMatch(/^[^l]/m);
      expect(await rex.sh('cut -d: -f1 /etc/passwd | sort | tr "\\n" " "')).toBe(
        'nobody root ' + (process.getuid?.() === 0 ? '' : 'sandbox '),
      );
      // What tools need still works: name lookup, the alternatives links, Python's TLS roots and git.
      expect(
        await rex.sh(
          'python3 -c "import socket; print(socket.gethostbyname(\\"localhost\\"))"; echo 1 | awk "{print \\$1+1}"; whoami',
        ),
      ).toBe(`127.0.0.1\n2\n${process.getuid?.() === 0 ? 'root' : 'sandbox'}\n`);
      expect(
        (
          await rex.execute([
            'python3',
            '-c',
            'import ssl; print(ssl.create_default_context().cert_store_stats()["x509_ca"] > 0)',
          ])
        ).stdout,
      ).toBe('True\n');
    });

    it('has no network (host Redis on 127.0.0.1:6379 is unreachable)', async () => {
      const probe =
        'import socket\ns = socket.socket()\ns.settimeout(2)\ntry:\n    s.connect(("127.0.0.1", 6379))\n    print("connected")\nexcept OSError as e:\n    print("refused", e.errno)\n';
      const result = await rex.execute(['python3', '-c', probe]);
      expect(result.stdout).toMatch(/^refused/);
      if (await hostPortOpen(6379)) expect(result.stdout).not.toContain('connected');
    });

    it('has no capabilities, cannot mount, and sees only its own processes', async () => {
      expect(await rex.sh('grep CapEff /proc/self/status')).toBe('CapEff:\t0000000000000000\n');
      expect((await rex.execute('mount -t tmpfs none /tmp 2>&1')).exit_code).not.toBe(0);
      const pids = (await rex.sh("ls /proc | grep -E '^[0-9]+$' | wc -l")).trim();
      expect(Number(pids)).toBeLessThan(10);
      expect(await rex.sh('tr "\\0" " " < /proc/1/cmdline')).toMatch(/^(\/usr\/bin\/)?bwrap /);
    });
  });
});
