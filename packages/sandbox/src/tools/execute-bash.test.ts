// execute_bash: every accepted form runs the command in bash and passes output and exit code through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeScratch, runShell, runTool } from '@rollout-fleet/test-kit/tool-bundle-harness';
import type { Scratch } from '@rollout-fleet/test-kit/tool-bundle-harness';

let scratch: Scratch;

beforeAll(() => {
  scratch = makeScratch();
});
afterAll(() => scratch.cleanup());

const SCRIPT = 'echo "out $((6 * 7))"; echo err >&2; exit 3';

describe('execute_bash', () => {
  it.each([
    ['positional', [SCRIPT]],
    ['--cmd', ['--cmd', SCRIPT]],
    ['--command', ['--command', SCRIPT]],
    ['--cmd=', [`--cmd=${SCRIPT}`]],
    ['-- then words', ['--', 'echo "out $((6 * 7))";', 'echo err >&2;', 'exit 3']],
  ])('%s form passes stdout, stderr and the exit code through', (_form, args) => {
    expect(runTool('execute_bash', args, { scratch })).toEqual({ code: 3, stdout: 'out 42\n', stderr: 'err\n' });
  });

  it("runs in the caller's working directory and environment, with bash semantics", () => {
    const result = runTool('execute_bash', ['[[ -n "$HOME" ]] && pwd && echo "$MARK"'], {
      scratch,
      env: { MARK: 'inherited' },
    });
    expect(result).toEqual({ code: 0, stdout: `${scratch.dir}\ninherited\n`, stderr: '' });
  });

  it('is on PATH as an executable, as the seed flow calls it', () => {
    const result = runShell(`execute_bash 'printf "%s|" a b > out.txt' && cat out.txt`, { scratch });
    expect({ code: result.code, stdout: result.stdout.toString('utf8') }).toEqual({ code: 0, stdout: 'a|b|' });
  });

  it('without a command it is a usage error (exit 2, stderr)', () => {
    const result = runTool('execute_bash', [], { scratch });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^usage: execute_bash/);
    expect(runTool('execute_bash', ['--cmd'], { scratch }).code).toBe(2);
  });
});
