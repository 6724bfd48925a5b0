import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { markCommand, setupStatus } from './session-setup.js';

const bash = (line: string): string => {
  try {
    return execFileSync('bash', ['-c', line], { encoding: 'utf8' });
  } catch (err) {
    return (err as { stdout: string }).stdout;
  }
};

describe('markCommand: a set-up command read from a marker only the shell can print', () => {
  it('reads the status and the output before the marker', () => {
    const marked = markCommand('echo hello; false', 'abc123');
    expect(marked.read(bash(marked.command))).toEqual({ ran: true, status: 1, output: 'hello\n' });
    const ok = markCommand('cd /', 'n1');
    expect(ok.read(bash(ok.command))).toEqual({ ran: true, status: 0, output: '' });
  });

  it('the command text (a terminal the model set to echo) does not contain the marker', () => {
    const marked = markCommand('true', 'deadbeef');
    expect(marked.read(marked.command)).toEqual({ ran: false, output: marked.command });
  });

  it('another nonce (an earlier set-up, stale output) does not count', () => {
    const earlier = markCommand('true', 'one');
    const now = markCommand('true', 'two');
    expect(now.read(bash(earlier.command))).toMatchObject({ ran: false });
  });

  it('fresh nonces by default', () => {
    expect(markCommand('true').command).not.toBe(markCommand('true').command);
  });

  it('setupStatus: the status, or SESSION_SETUP_AMBIGUOUS (infra) when no marker came back', () => {
    expect(setupStatus({ ran: true, status: 3, output: '' }, 'x')).toBe(3);
    expect(() => setupStatus({ ran: false, output: 'SHELLPS1PREFIX' }, 'the session environment')).toThrow(
      expect.objectContaining({
        code: 'SESSION_SETUP_AMBIGUOUS',
        class: 'infra',
        message: expect.stringContaining('the session environment'),
      }),
    );
  });
});
