// The fidelity normalisation (docs/fidelity.md): every rule with a case that must match and one that must still
// differ, the agent views of a replayed output, the step verdicts and the episode figure.
import { describe, expect, it } from 'vitest';
import { sweAgentObservation, splitlinesJoin } from './agent-view.js';
import { compareStep, summariseFidelity } from './compare.js';
import { lineDiff } from './line-diff.js';
import type { RecordingFormat } from './normalise.js';

const SWE: RecordingFormat = { agent: 'swe-agent', stripEnds: false };
const PTY: RecordingFormat = { agent: 'swe-agent', stripEnds: true };
const MINI: RecordingFormat = { agent: 'mini-swe-agent', stripEnds: false };
const GENERIC: RecordingFormat = { agent: 'generic', stripEnds: false };

function verdict(recorded: string, replayed: string, format: RecordingFormat = GENERIC, exitCode: number | null = 0) {
  return compareStep({ index: 0, recorded, replayed, exitCode }, { format });
}

describe('normalisation rules', () => {
  it('line-endings: CRLF and LF match; a lone CR is kept', () => {
    expect(verdict('a\r\nb', 'a\nb')).toMatchObject({ verdict: 'match', rules: ['line-endings'] });
    expect(verdict('a\rb', 'a\nb').verdict).toBe('differs');
  });

  it('ansi-colour: colour codes go; the text inside them does not', () => {
    expect(verdict('\x1b[31mFAILED\x1b[0m test_x', 'FAILED test_x')).toMatchObject({
      verdict: 'match',
      rules: ['ansi-colour'],
    });
    expect(verdict('\x1b[31mFAILED\x1b[0m test_x', 'PASSED test_x').verdict).toBe('differs');
  });

  it('trailing-whitespace: spaces at line ends and final newlines; blank lines inside still count', () => {
    expect(verdict('     2\t\nx  \n\n', '     2\nx')).toMatchObject({
      verdict: 'match',
      rules: ['trailing-whitespace'],
    });
    expect(verdict('a\n\nb', 'a\nb').verdict).toBe('differs');
    expect(verdict('  a', 'a').verdict).toBe('differs');
  });

  it('template: the SWE-agent footer and OBSERVATION: prefix are removed from the recorded side only', () => {
    const footer = '\n(Open file: /r/a.py)\n(Current directory: /r)\nbash-$';
    expect(verdict(`8.2${footer}`, '8.2', SWE)).toMatchObject({ verdict: 'match', rules: ['template'] });
    expect(verdict('OBSERVATION:\nok', 'ok', SWE).verdict).toBe('match');
    expect(verdict(`Your command ran successfully and did not produce any output.${footer}`, '', SWE).verdict).toBe(
      'match',
    );
    // The footer is not removed from a replayed output, and only SWE-agent recordings have one.
    expect(verdict(`8.2${footer}`, `8.3`, SWE).verdict).toBe('differs');
    expect(verdict(`8.2${footer}`, '8.2', GENERIC).verdict).toBe('differs');
    expect(verdict('Your command ran successfully and did not produce any output.', 'x', SWE).verdict).toBe('differs');
  });

  it('strip-ends: only for pty recordings, which stripped both ends', () => {
    expect(verdict('\r\ndiff --git a b\r\n \r\n', '\ndiff --git a b\n \n', PTY)).toMatchObject({ verdict: 'match' });
    expect(verdict('x', '\n\nx', PTY).verdict).toBe('match');
    expect(verdict('x', '\n\nx', SWE).verdict).toBe('differs');
    expect(verdict('x', 'x\ny', PTY).verdict).toBe('differs');
  });

  it('unordered-lines: find_file results and directory listings compare as sets; other output keeps its order', () => {
    const header = 'Found 2 matches for "a.py" in /r:';
    expect(verdict(`${header}\n/r/x/a.py\n/r/a.py`, `${header}\n/r/a.py\n/r/x/a.py`)).toMatchObject({
      verdict: 'match',
      rules: ['unordered-lines'],
    });
    expect(verdict(`${header}\n/r/x/a.py\n/r/a.py`, `${header}\n/r/a.py\n/r/y/a.py`).verdict).toBe('differs');
    const listing = "Here's the files and directories up to 2 levels deep in /r, excluding hidden items:";
    expect(verdict(`${listing}\n/r\n/r/b\n/r/a`, `${listing}\n/r\n/r/a\n/r/b`).verdict).toBe('match');
    expect(verdict('1:b\n2:a', '2:a\n1:b').verdict).toBe('differs');
  });

  it('lint-codes: a lint failure compares flake8 codes, not their Python-version wording', () => {
    const failure = (message: string): string =>
      `Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- ${message}\n\nThis is how your edit would have looked if applied`;
    expect(
      verdict(failure('E999 SyntaxError: invalid syntax'), failure("E999 SyntaxError: '(' was never closed")),
    ).toMatchObject({ verdict: 'match', rules: ['lint-codes'] });
    expect(verdict(failure('E999 SyntaxError: invalid syntax'), failure("F821 undefined name 'x'")).verdict).toBe(
      'differs',
    );
    // Outside a lint failure, "- E999 ..." lines are compared whole.
    expect(verdict('- E999 SyntaxError: invalid syntax', '- E999 SyntaxError: other').verdict).toBe('differs');
  });

  it('mini-output: return code and output of a mini-swe-agent observation; a different return code differs', () => {
    const recorded = '<returncode>2</returncode>\n<output>\nls: cannot access x\n</output>';
    expect(verdict(recorded, 'ls: cannot access x\n', MINI, 2)).toMatchObject({ verdict: 'match' });
    expect(verdict(recorded, 'ls: cannot access x\n', MINI, 0).verdict).toBe('differs');
    expect(verdict(recorded, 'ls: cannot access y\n', MINI, 2).verdict).toBe('differs');
    // An elided recording: head and tail against the replay's head and tail.
    const long = `${'a'.repeat(6000)}${'b'.repeat(6000)}`;
    const elided = `<returncode>0</returncode>\n<warning>\nlong\n</warning>\n<output_head>\n${'a'.repeat(5000)}\n</output_head>\n<elided_chars>\n2000 characters elided\n</elided_chars>\n<output_tail>\n${'b'.repeat(5000)}\n</output_tail>`;
    expect(verdict(elided, long, MINI, 0).verdict).toBe('match');
    expect(verdict(elided, `${'a'.repeat(6000)}${'c'.repeat(6000)}`, MINI, 0).verdict).toBe('differs');
  });
});

describe("the agent's view of a replayed output", () => {
  it('1.x: the retry token is deleted, leaving its newline', () => {
    expect(sweAgentObservation('msg\n\n###SWE-AGENT-RETRY-WITH-OUTPUT###\n', { version: '1.1' })).toEqual({
      text: 'msg\n\n\n',
      rules: ['agent-retry-token'],
    });
  });

  it('1.x submission: 1.0-dev took the text between the markers; releases read the patch file', () => {
    const out = '<<SWE_AGENT_SUBMISSION>>\ndiff --git a/x b/x\n<<SWE_AGENT_SUBMISSION>>\n';
    expect(sweAgentObservation(out, { version: '1.0-dev' }).text).toBe('\ndiff --git a/x b/x\n');
    expect(sweAgentObservation(out, { version: '1.1' }, 'diff --git a/x b/x\n').text).toBe('diff --git a/x b/x\n');
    expect(sweAgentObservation('<<SWE_AGENT_SUBMISSION>>\n', { version: 'main' }, 'PATCH').text).toBe('PATCH');
  });

  it('0.x submission and the 0.6+ splitlines join', () => {
    expect(sweAgentObservation('<<SUBMISSION||\ndiff\n||SUBMISSION>>\n', { version: '0.3' }).text).toBe('\ndiff\n');
    expect(sweAgentObservation('<<SUBMISSION||\ndiff\n||SUBMISSION>>\n', { version: '0.7' }).text).toBe('');
    expect(sweAgentObservation('a\r\nb\rc\n', { version: '0.6.1' })).toEqual({
      text: 'a\nb\nc',
      rules: ['agent-splitlines'],
    });
    expect(splitlinesJoin('a\u2028b\x0bc')).toBe('a\nb\nc');
    expect(sweAgentObservation('a\n', { version: '0.3' }).text).toBe('a\n');
  });
});

describe('verdicts and the episode figure', () => {
  it('no recorded observation is no_record; a difference keeps the recorded text and a diff', () => {
    expect(compareStep({ index: 3, recorded: undefined, replayed: 'x', exitCode: 0 }, { format: GENERIC })).toEqual({
      index: 3,
      verdict: 'no_record',
    });
    const differs = compareStep(
      { index: 1, recorded: 'a\nb\nc', replayed: 'a\nB\nc', exitCode: 0 },
      { format: GENERIC },
    );
    expect(differs).toEqual({
      index: 1,
      verdict: 'differs',
      recorded: 'a\nb\nc',
      diff: '--- recorded\n+++ replayed\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c',
    });
  });

  it('matched / compared, the first divergence, and null when nothing was compared', () => {
    const steps = [
      { index: 0, verdict: 'match' as const },
      { index: 1, verdict: 'no_record' as const },
      { index: 2, verdict: 'differs' as const },
      { index: 3, verdict: 'match' as const },
      { index: 4, verdict: 'differs' as const },
    ];
    expect(summariseFidelity(steps)).toMatchObject({
      compared: 4,
      matched: 2,
      differed: 2,
      no_record: 1,
      first_divergence: 2,
      ratio: 0.5,
    });
    expect(summariseFidelity([{ index: 0, verdict: 'no_record' }])).toMatchObject({
      compared: 0,
      ratio: null,
      first_divergence: null,
    });
  });

  it('the diff is clipped and stays bounded for huge texts', () => {
    const big = Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n');
    const diff = lineDiff(big, `${big}\nextra`, 500);
    expect(diff.length).toBeLessThan(600);
    expect(diff).toMatch(/diff clipped at 500 characters/);
    expect(lineDiff('x', 'x\ny')).toBe('--- recorded\n+++ replayed\n@@ -1,1 +1,2 @@\n x\n+y');
  });
});
