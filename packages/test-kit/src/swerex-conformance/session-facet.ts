/** §9 items 6–9: bash session on a pty, output cleaning, exit codes and check modes, expect, timeouts, interrupts. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { RexCaller } from './rex-caller.js';
import type { SwerexConformanceTarget } from './target.js';

export function sessionFacet(getTarget: () => SwerexConformanceTarget): void {
  const rex = () => new RexCaller(getTarget());
  const fresh = async (extra: Record<string, unknown> = {}) => {
    const session = `s-${randomUUID()}`;
    await rex().createSession(session, extra);
    return session;
  };

  describe('reference outputs (swerex-protocol.md §6.7)', () => {
    it('matches the table row by row', async () => {
      const s = await fresh();
      const rows: Array<[string, Record<string, unknown>, string, number | null, string]> = [
        ['echo hello; echo world', {}, 'hello\nworld\n', 0, 'SHELLPS1PREFIX'],
        ['false', { check: 'silent' }, '', 1, 'SHELLPS1PREFIX'],
        ["printf 'a\\nb'", {}, 'a\nb', 0, 'SHELLPS1PREFIX'],
        ['echo out; echo err 1>&2', {}, 'out\nerr\n', 0, 'SHELLPS1PREFIX'],
        ['', {}, '', 0, 'SHELLPS1PREFIX'],
        ['cd /tmp && export FOO=1', {}, '', 0, 'SHELLPS1PREFIX'],
        ['pwd; echo $FOO', {}, '/tmp\n1\n', 0, 'SHELLPS1PREFIX'],
        ["cat <<'EOF'\nline1\nEOF", {}, 'line1\n', 0, 'UNIQUESTRING29234'],
      ];
      for (const [command, extra, output, exitCode, expectString] of rows) {
        const observation = await rex().run(s, command, extra);
        expect({
          command,
          output: observation.output,
          exit_code: observation.exit_code,
          expect_string: observation.expect_string,
        }).toEqual({
          command,
          output,
          exit_code: exitCode,
          expect_string: expectString,
        });
      }
    });

    it('joins multi-line commands into one prompt and keeps heredocs whole', async () => {
      const s = await fresh();
      expect((await rex().run(s, 'echo a\n\necho b  # comment\necho c')).output).toBe('a\nb\nc\n');
      expect((await rex().run(s, 'cat <<EOF\nx\ny\nEOF')).output).toBe('x\ny\n');
      expect((await rex().run(s, 'for i in 1 2; do\n  echo $i\ndone')).output).toBe('1\n2\n');
      expect(await rex().run(s, 'A=(1 2)\necho ${A[1]}')).toMatchObject({
        output: '2\n',
        expect_string: 'UNIQUESTRING29234',
      });
    });
  });

  describe('session environment', () => {
    it('runs bash on a pty with TERM=dumb and keeps state between calls', async () => {
      const s = await fresh();
      expect((await rex().run(s, 'echo $TERM; [ -t 0 ] && [ -t 1 ] && echo tty')).output).toBe('dumb\ntty\n');
      await rex().run(s, 'greet() { echo "hi $1"; }; export LEVEL=3; cd /');
      expect((await rex().run(s, 'greet you; echo $LEVEL; pwd')).output).toBe('hi you\n3\n/\n');
    });

    it('reads ~/.bashrc and sources startup_source files, then resets PS1', async () => {
      const home = (await rex().sh('printf %s "$HOME"')).trim();
      const dir = `/tmp/rex-startup-${randomUUID()}`;
      await rex().ok('/write_file', {
        path: `${home}/.bashrc`,
        content: 'export FROM_BASHRC=yes\necho banner-from-bashrc\n',
      });
      await rex().ok('/write_file', {
        path: `${dir}/env.sh`,
        content: "export PS1='custom> '\nexport FROM_STARTUP=1\n",
      });
      try {
        const session = `rc-${randomUUID()}`;
        const created = await rex().createSession(session, { startup_source: [`${dir}/env.sh`] });
        expect(created.output).toContain('banner-from-bashrc');
        expect(await rex().run(session, 'echo $FROM_BASHRC $FROM_STARTUP')).toMatchObject({
          output: 'yes 1\n',
          expect_string: 'SHELLPS1PREFIX',
        });
      } finally {
        await rex().sh(`rm -f ${home}/.bashrc`);
      }
    });

    it('registers the name before the shell starts: a failed start keeps it taken', async () => {
      const dir = `/tmp/rex-slow-${randomUUID()}`;
      await rex().ok('/write_file', { path: `${dir}/slow.sh`, content: 'sleep 3\n' });
      const session = `slow-${randomUUID()}`;
      const exc = await rex().fails('/create_session', {
        session,
        session_type: 'bash',
        startup_source: [`${dir}/slow.sh`],
        startup_timeout: 0.5,
      });
      expect(exc.class_path).toBe('pexpect.exceptions.TIMEOUT');
      const again = await rex().fails('/create_session', { session, session_type: 'bash' });
      expect(again.class_path).toBe('swerex.exceptions.SessionExistsError');
    });
  });

  describe('output cleaning and exit codes', () => {
    it('strips ANSI escapes, turns \\r\\n into \\n, keeps lone \\r and trailing newlines', async () => {
      const s = await fresh();
      expect((await rex().run(s, "printf '\\033[31mred\\033[0m\\n'")).output).toBe('red\n');
      // The terminal turns each \n into \r\n (ONLCR); cleaning turns those back, a lone \r survives.
      expect((await rex().run(s, "printf 'a\\rb\\n\\n'")).output).toBe('a\rb\n\n');
    });

    it('does not truncate: seq 1 100000 returns all 588895 characters', async () => {
      const s = await fresh();
      const observation = await rex().run(s, 'seq 1 100000');
      expect((observation.output as string).length).toBe(588_895);
      expect((observation.output as string).endsWith('99999\n100000\n')).toBe(true);
    });

    it('honours check modes: silent, ignore, raise', async () => {
      const s = await fresh();
      expect(await rex().run(s, 'echo x; (exit 7)', { check: 'silent' })).toMatchObject({
        output: 'x\n',
        exit_code: 7,
      });
      expect(await rex().run(s, 'echo y; (exit 7)', { check: 'ignore' })).toMatchObject({
        output: 'y\n',
        exit_code: null,
      });
      expect((await rex().runFails(s, '(exit 7)', { check: 'raise' })).class_path).toBe(
        'swerex.exceptions.NonZeroExitCodeError',
      );
      expect(await rex().run(s, 'echo z')).toMatchObject({ output: 'z\n', exit_code: 0 });
    });

    it('treats expect entries as regular expressions and reports the one that matched', async () => {
      const s = await fresh();
      const observation = await rex().run(s, 'echo abc123', { expect: ['abc[0-9]+'] });
      expect(observation).toMatchObject({ expect_string: 'abc[0-9]+', exit_code: 0 });
      expect(observation.output).not.toContain('SHELLPS1PREFIX');
      expect((await rex().run(s, 'echo after')).output).toBe('after\n');
    });
  });

  describe('timeouts and interrupts', () => {
    it('timeout null waits as long as needed', async () => {
      const s = await fresh();
      expect(await rex().run(s, 'sleep 1.2; echo slept', { timeout: null })).toMatchObject({
        output: 'slept\n',
        exit_code: 0,
      });
    });

    it('a timed-out command keeps running; its prompt is consumed by the next command', async () => {
      const s = await fresh();
      const marker = `/tmp/rex-late-${randomUUID()}`;
      await rex().runFails(s, `sleep 1; touch ${marker}`, { timeout: 0.3 });
      await vi.waitFor(async () => expect((await rex().execute(['test', '-e', marker])).exit_code).toBe(0), {
        timeout: 10_000,
        interval: 100,
      });
      expect(await rex().run(s, 'echo x')).toMatchObject({ output: 'x\n', exit_code: 0 });
    });

    it('bash_interrupt stops the running command (Ctrl-C)', async () => {
      const s = await fresh();
      await rex().runFails(s, 'sleep 100', { timeout: 0.3 });
      expect(await rex().interrupt(s)).toMatchObject({
        exit_code: 0,
        expect_string: 'SHELLPS1PREFIX',
        failure_reason: '',
        session_type: 'bash',
      });
      expect(await rex().run(s, 'echo back')).toMatchObject({ output: 'back\n', exit_code: 0 });
    });

    it('bash_interrupt falls back to Ctrl-Z + kill -9 %1 when Ctrl-C is ignored', async () => {
      const s = await fresh();
      await rex().runFails(s, `bash -c "trap '' INT; sleep 100"`, { timeout: 0.3 });
      expect(await rex().interrupt(s, { timeout: 0.2, n_retry: 2 })).toMatchObject({
        exit_code: 0,
        expect_string: 'SHELLPS1PREFIX',
      });
      const after = await rex().run(s, 'echo alive', { check: 'silent' });
      expect(after.output).toContain('alive\n');
      // bash reports (and forgets) the killed job at a prompt after it has reaped it, which may be this one or
      // the next: the reference behaves the same. What must hold is that it goes away.
      await vi.waitFor(async () => expect((await rex().run(s, 'jobs | wc -l')).output).toBe('0\n'), {
        timeout: 10_000,
        interval: 100,
      });
    });
  });

  describe('interactive modes', () => {
    it('talks to a REPL with is_interactive_command and leaves it with is_interactive_quit', async () => {
      const s = await fresh();
      const banner = await rex().run(s, 'python3', { is_interactive_command: true, expect: ['>>> '], timeout: 10 });
      expect(banner).toMatchObject({ exit_code: 0, expect_string: '>>> ' });
      const two = await rex().run(s, 'print(1+1)', { is_interactive_command: true, expect: ['>>> '], timeout: 10 });
      expect(two.output).toBe('2');
      const quit = await rex().run(s, 'exit()', { is_interactive_quit: true, timeout: 10 });
      expect(quit).toMatchObject({ exit_code: 0, expect_string: 'SHELLPS1PREFIX' });
      expect(await rex().run(s, 'echo shell-again')).toMatchObject({ output: 'shell-again\n', exit_code: 0 });
    });
  });

  describe('close_session', () => {
    it('removes the name so it can be created again', async () => {
      const s = await fresh();
      await rex().closeSession(s);
      expect((await rex().runFails(s, 'true')).class_path).toBe('swerex.exceptions.SessionDoesNotExistError');
      await rex().createSession(s);
      expect((await rex().run(s, 'echo reborn')).output).toBe('reborn\n');
    });
  });
}
