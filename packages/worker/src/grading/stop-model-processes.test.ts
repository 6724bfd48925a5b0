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
