/**
 * The stop before extraction, run for real — inside a pid namespace of its own (bubblewrap), never on the host,
 * where "every process started after the server" would be everyone's. A stand-in server (bash) starts a session
 * with a background job, a daemonised loop (setsid, reparented to init) and a fork loop; the script, its child as
 * an /execute subprocess is, must leave only the server and itself (and their ancestors).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { STOP_SCRIPT } from './stop-model-processes.js';

const run = promisify(execFile);

/** A pid namespace with the host's filesystem (read-only is not needed: nothing is written). */
const JAIL = ['--unshare-pid', '--die-with-parent', '--dev-bind', '/', '/', '--proc', '/proc'];

describe('stopModelProcesses script', () => {
  it('kills sessions, their jobs, daemons and fork loops; keeps the server and its ancestors', async () => {
    // pid 1 (bwrap's init) → sh (platform, started before the server) → server (bash) → { model processes, stop }.
    const server = [
      'sleep 300 &',
      '(setsid sh -c "while :; do sleep 1; done" &)',
      '(while :; do sleep 0.2 & wait; done) &',
      'bash -c "sleep 300; sleep 300" &',
      'sleep 0.3',
      `bash --noprofile --norc -c "$STOP" rf-stop`,
      'echo "exit=$?"',
      // What is left of this namespace: every pid with its command name.
      'for d in /proc/[0-9]*; do [ -r "$d/comm" ] && read -r c < "$d/comm" && s=$(cut -d" " -f3 "$d/stat" 2>/dev/null) && [ "$s" != Z ] && echo "left ${d#/proc/} $c"; done',
    ].join('\n');
    const { stdout } = await run('bwrap', [...JAIL, '/bin/sh', '-c', 'sleep 0.05; exec bash -c "$0"', server], {
      env: { PATH: '/usr/bin:/bin', STOP: STOP_SCRIPT },
      timeout: 30_000,
    });
    expect(stdout).toMatch(/^stopped \d+ \d+$/m);
    expect(stdout).toContain('exit=0');
    const left = stdout
      .split('\n')
      .filter((l) => l.startsWith('left '))
      .map((l) => l.split(' ')[2]);
    // Only the server's own bash (and the listing's own helpers, started after the stop) remain: no sleep, no sh loop.
    expect(left).not.toContain('sleep');
    expect(left.filter((c) => c === 'sh')).toHaveLength(0);
    expect(left).toContain('bash');
  });
});

describe('stopModelProcesses script in the host pid namespace (a sandbox without isolation)', () => {
  it("stops only the server's descendants: a host process started after the server is left alone", async () => {
    // A bystander the host starts after the server (another sandbox's server, a worker): never the model's.
    const { spawn } = await import('node:child_process');
    const server = spawn(
      'bash',
      [
        '-c',
        'sleep 300 & sleep 0.3; bash --noprofile --norc -c "$STOP" rf-stop; echo "exit=$?"; kill %1 2>/dev/null; echo "job=$(jobs -r | wc -l)"',
      ],
      {
        env: { PATH: '/usr/bin:/bin', STOP: STOP_SCRIPT },
      },
    );
    const bystander = spawn('sleep', ['300']);
    try {
      let stdout = '';
      server.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      await new Promise((resolve) => server.once('exit', resolve));
      expect(stdout).toMatch(/^stopped [1-9]\d* \d+$/m);
      expect(stdout).toContain('exit=0');
      // The server's own job was killed; the bystander still runs.
      expect(stdout).toContain('job=0');
      expect(bystander.exitCode).toBeNull();
      expect(bystander.signalCode).toBeNull();
    } finally {
      bystander.kill('SIGKILL');
    }
  });
});
