/**
 * The result channel's reader (docs/adversarial-grading.md, "The result channel"), row by row: a channel written
 * with this eval's key reads back; every way to write it without the reporter — another key, no MAC, lines out of
 * order or dropped, no `start`, no `end` — is a `violated` finding with its stable code.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { channelModeFor, compareWithLog, readChannel } from './result-channel.js';

const KEY = 'k'.repeat(32);

/** A channel as the reporter writes it (rf_result_channel.py `_emit`), records numbered from 1. */
function channel(records: Array<Record<string, unknown>>, key = KEY): string {
  let previous = '';
  return records
    .map((r, i) => {
      const payload = JSON.stringify({ ...r, n: i + 1 });
      const mac = createHmac('sha256', key).update(`${previous}\n${payload}`).digest('hex');
      previous = mac;
      return `${payload}\t${mac}\n`;
    })
    .join('');
}
const start = { k: 'start', runner: 'pytest' };
const end = { k: 'end', exit: 0 };
const test = (id: string, s: string): Record<string, unknown> => ({ k: 'test', id, s });

describe('readChannel', () => {
  it('reads what the reporter wrote: each test at its worst phase (a teardown error outranks a pass)', () => {
    const text = channel([
      start,
      test('t::a', 'PASSED'),
      test('t::b', 'PASSED'),
      test('t::b', 'ERROR'),
      test('t::c', 'XPASS'),
      end,
    ]);
    const reading = readChannel(text, KEY);
    expect(reading).toMatchObject({ started: true, ended: true, findings: [] });
    // XPASS has no SWE-bench status: absent, as the log parsers leave it.
    expect(reading.statuses).toEqual({ 't::a': 'PASSED', 't::b': 'ERROR' });
  });

  it.each([
    ['nothing written', '', 'RESULT_CHANNEL_MISSING'],
    [
      'written with another key (the patch guessing)',
      channel([start, test('t::a', 'PASSED'), end], 'x'.repeat(32)),
      'RESULT_CHANNEL_FORGED',
    ],
    [
      'a line without a MAC appended by the patch',
      channel([start, end]) + '{"k":"test","id":"t::a","s":"PASSED","n":3}\n',
      'RESULT_CHANNEL_FORGED',
    ],
    [
      'a line dropped',
      channel([start, test('t::a', 'FAILED'), end])
        .split('\n')
        .filter((_, i) => i !== 1)
        .join('\n'),
      'RESULT_CHANNEL_FORGED',
    ],
    ['no start record', channel([test('t::a', 'PASSED'), end]), 'RESULT_CHANNEL_FORGED'],
    [
      'no end record (os._exit before the session finished)',
      channel([start, test('t::a', 'PASSED')]),
      'RESULT_CHANNEL_INCOMPLETE',
    ],
    [
      'the reporter found itself rebound',
      channel([start, test('t::a', 'PASSED'), { k: 'tamper', what: ['_emit'] }, end]),
      'RESULT_CHANNEL_TAMPERED',
    ],
  ])('%s → %s (violated)', (_name, text, code) => {
    const reading = readChannel(text, KEY);
    expect(reading.findings.map((f) => f.code)).toEqual([code]);
    expect(reading.findings[0]?.severity).toBe('violated');
  });
});

describe('compareWithLog', () => {
  it.each([
    ['agree', { a: 'PASSED' }, { a: 'PASSED' }, []],
    ['agree on failure classes (FAILED vs ERROR)', { a: 'ERROR' }, { a: 'FAILED' }, []],
    ['log says passed, channel failed (forged lines)', { a: 'FAILED' }, { a: 'PASSED' }, ['RESULT_CHANNEL_DISAGREES']],
    ['log has a test the channel never saw', {}, { a: 'PASSED' }, ['RESULT_CHANNEL_DISAGREES']],
    ['unlisted tests do not count', { a: 'PASSED', z: 'FAILED' }, { a: 'PASSED' }, []],
  ] as const)('%s', (_name, channelMap, logMap, codes) => {
    const findings = compareWithLog({
      channel: channelMap,
      log: logMap,
      failToPass: ['a'],
      passToPass: [],
      mode: 'pass_and_fail',
    });
    expect(findings.map((f) => f.code)).toEqual(codes);
  });
});

describe('channelModeFor', () => {
  it.each([
    ['pytest', 'pytest -rA', 'pytest'],
    ['matplotlib', 'pytest -rA', 'pytest'],
    ['django', './tests/runtests.py --verbosity 2', 'unittest'],
    ['django', 'python3 -m unittest -v', 'unittest'],
    ['sympy', 'bin/test -C --verbose', 'none'],
    ['pytest', 'tox --current-env -epy39 -v --', 'none'],
  ] as const)('%s / %s → %s', (parser, command, mode) => {
    expect(channelModeFor(parser, command)).toBe(mode);
  });
});
