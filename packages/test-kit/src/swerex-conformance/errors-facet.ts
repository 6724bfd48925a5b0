/** §9 item 5: 511 `swerexception` bodies with exact class paths and message formats. */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RexCaller } from './rex-caller.js';
import type { SwerexConformanceTarget } from './target.js';

export function errorsFacet(getTarget: () => SwerexConformanceTarget): void {
  const rex = () => new RexCaller(getTarget());

  describe('511 swerexception', () => {
    it('SessionExistsError / SessionDoesNotExistError', async () => {
      const session = `dup-${randomUUID().slice(0, 8)}`;
      await rex().createSession(session);
      const exists = await rex().fails('/create_session', { session, session_type: 'bash' });
      expect([exists.class_path, exists.message]).toEqual([
        'swerex.exceptions.SessionExistsError',
        `session ${session} already exists`,
      ]);
      const missingRun = await rex().runFails('nope', 'true');
      expect([missingRun.class_path, missingRun.message]).toEqual([
        'swerex.exceptions.SessionDoesNotExistError',
        "session 'nope' does not exist",
      ]);
      const missingClose = await rex().fails('/close_session', { session: 'nope', session_type: 'bash' });
      expect(missingClose.message).toBe("session 'nope' does not exist");
      expect(missingRun.extra_info).toEqual({});
    });

    it('BashIncorrectSyntaxError with extra_info, and nothing runs', async () => {
      const session = `syntax-${randomUUID()}`;
      await rex().createSession(session);
      const marker = `/tmp/rex-syntax-${randomUUID()}`;
      const exc = await rex().runFails(session, `touch ${marker}\n(a`);
      expect(exc.class_path).toBe('swerex.exceptions.BashIncorrectSyntaxError');
      expect(exc.message).toMatch(
        new RegExp(
          `^Error \\(exit code 2\\) while checking bash command \\n'touch ${marker}\\\\n\\(a'\\n---- Stderr ----\\n`,
        ),
      );
      expect(exc.message).toContain('\n---- Stdout ----\n');
      expect(Object.keys(exc.extra_info).sort()).toEqual(['bash_stderr', 'bash_stdout']);
      expect(exc.extra_info.bash_stderr).toMatch(/syntax error/);
      const check = await rex().execute(['test', '-e', marker]);
      expect(check.exit_code).toBe(1);
      const exact = await rex().runFails(session, '(a');
      expect(exact.message).toBe(
        "Error (exit code 2) while checking bash command \n'(a'\n---- Stderr ----\nbash: line 2: syntax error: unexpected end of file\n\n---- Stdout ----\n",
      );
      expect(exact.extra_info).toEqual({
        bash_stdout: '',
        bash_stderr: 'bash: line 2: syntax error: unexpected end of file\n',
      });
    });

    it('CommandTimeoutError with Python float formatting', async () => {
      const session = `timeout-${randomUUID()}`;
      await rex().createSession(session);
      const exc = await rex().runFails(session, 'sleep 3', { timeout: 0.5 });
      expect([exc.class_path, exc.message]).toEqual([
        'swerex.exceptions.CommandTimeoutError',
        "timeout after 0.5 seconds while running command 'sleep 3'",
      ]);
      await rex().interrupt(session);
      const integral = await rex().runFails(session, 'sleep 3', { timeout: 1 });
      expect(integral.message).toBe("timeout after 1.0 seconds while running command 'sleep 3'");
      await rex().interrupt(session);
    });

    it('NonZeroExitCodeError for sessions (repr quoting, error_msg prefix)', async () => {
      const session = `nonzero-${randomUUID()}`;
      await rex().createSession(session);
      const plain = await rex().runFails(session, 'false');
      expect([plain.class_path, plain.message]).toEqual([
        'swerex.exceptions.NonZeroExitCodeError',
        "Command 'false' failed with exit code 1. Here is the output:\n''",
      ]);
      const quoted = await rex().runFails(session, "echo it; false # it's", { error_msg: 'step failed' });
      expect(quoted.message).toBe(
        `step failed: Command "echo it; false # it's" failed with exit code 1. Here is the output:\n'it\\n'`,
      );
    });

    it('NonZeroExitCodeError and CommandTimeoutError for /execute', async () => {
      const shell = await rex().fails('/execute', { command: 'exit 3', shell: true, check: true });
      expect([shell.class_path, shell.message]).toEqual([
        'swerex.exceptions.NonZeroExitCodeError',
        "Command 'exit 3' failed with exit code 3. Stdout:\n''\nStderr:\n''",
      ]);
      const argv = await rex().fails('/execute', { command: ['false'], check: true, error_msg: 'oops' });
      expect(argv.message).toBe("oops: Command ['false'] failed with exit code 1. Stdout:\n''\nStderr:\n''");
      const timeout = await rex().fails('/execute', { command: ['sleep', '2'], timeout: 0.3 });
      expect([timeout.class_path, timeout.message]).toEqual([
        'swerex.exceptions.CommandTimeoutError',
        'Timeout (0.3s) exceeded while running command',
      ]);
    });

    it('foreign classes travel as builtins.*', async () => {
      const path = `/tmp/rex-missing-${randomUUID()}`;
      const missing = await rex().fails('/read_file', { path });
      expect([missing.class_path, missing.message]).toEqual([
        'builtins.FileNotFoundError',
        `[Errno 2] No such file or directory: '${path}'`,
      ]);
      const notProgram = await rex().fails('/execute', { command: 'ls -la' });
      expect([notProgram.class_path, notProgram.message]).toEqual([
        'builtins.FileNotFoundError',
        "[Errno 2] No such file or directory: 'ls -la'",
      ]);
      const directory = await rex().fails('/read_file', { path: '/tmp' });
      expect(directory.class_path).toBe('builtins.IsADirectoryError');
    });
  });
}
