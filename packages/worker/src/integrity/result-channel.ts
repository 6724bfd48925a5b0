/**
 * The worker's side of the result channel (packages/worker/grader/rf_result_channel.py; docs/adversarial-grading.md,
 * "The result channel"): each line is `<json>\t<HMAC-SHA256(key, previous mac + "\n" + json)>`, numbered from 1,
 * a `start` record first and an `end` record last. What it says is compared with the log: a channel that is
 * missing, forged (a line not MACed with this eval's key, out of order), incomplete (no `end`: `os._exit`, a
 * killed runner), tampered with (the plugin found itself rebound or imported twice), or that disagrees with the
 * log about a listed test, is a `violated` finding — the log alone can be printed by the patch's code.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IntegrityFinding } from '@rollout-fleet/shared';
import { classifyTest, type GradingMode } from '../grading/resolution.js';
import { isTestStatus, type ParserName, type StatusMap, type TestStatus } from '../grading/types.js';
import type { ChannelMode } from './eval-nonce.js';

/** The channel each parser's runner gets (sympy's bin/test and tox runs cannot be instrumented: markers only). */
export function channelModeFor(parser: ParserName, testCommand: string | undefined): ChannelMode {
  const command = (testCommand ?? '').trim();
  if (/^(?:tox|bin\/test|\.\/bin\/test)\b/.test(command)) return 'none';
  if (parser === 'sympy') return 'none';
  return parser === 'django' ? 'unittest' : 'pytest';
}

export interface ChannelReading {
  started: boolean;
  ended: boolean;
  /** Listed or not: every test the channel reported, worst status of its phases. */
  statuses: StatusMap;
  findings: IntegrityFinding[];
}

const RANK: Readonly<Record<TestStatus, number>> = { PASSED: 0, XFAIL: 0, SKIPPED: 0, FAILED: 1, ERROR: 2 };

function violated(code: string, detail: string): IntegrityFinding {
  return { code, severity: 'violated', detail };
}

export function readChannel(text: string, key: string): ChannelReading {
  const reading: ChannelReading = { started: false, ended: false, statuses: {}, findings: [] };
  const lines = text.split('\n').filter((l) => l !== '');
  if (lines.length === 0) {
    reading.findings.push(violated('RESULT_CHANNEL_MISSING', 'the test runner wrote nothing to the result channel'));
    return reading;
  }
  let previous = '';
  const statuses = new Map<string, TestStatus>();
  for (const [i, line] of lines.entries()) {
    const tab = line.lastIndexOf('\t');
    const payload = tab < 0 ? line : line.slice(0, tab);
    const mac = tab < 0 ? '' : line.slice(tab + 1);
    const expected = createHmac('sha256', key).update(`${previous}\n${payload}`).digest('hex');
    const record = macOk(mac, expected) ? parseRecord(payload) : undefined;
    if (record === undefined || record.n !== i + 1 || (i === 0) !== (record.k === 'start')) {
      reading.findings.push(
        violated(
          'RESULT_CHANNEL_FORGED',
          `line ${i + 1} of the result channel was not written by the grader's reporter`,
        ),
      );
      break;
    }
    previous = mac;
    if (record.k === 'start') reading.started = true;
    else if (record.k === 'end') reading.ended = true;
    else if (record.k === 'tamper')
      reading.findings.push(
        violated('RESULT_CHANNEL_TAMPERED', `the reporter found itself changed: ${JSON.stringify(record.what ?? [])}`),
      );
    else if (record.k === 'test' && typeof record.id === 'string' && typeof record.s === 'string') {
      const status = record.s;
      if (!isTestStatus(status)) continue; // XPASS: no SWE-bench status, as the log parsers see it
      const before = statuses.get(record.id);
      if (before === undefined || RANK[status] >= RANK[before]) statuses.set(record.id, status);
    }
  }
  reading.statuses = Object.fromEntries(statuses) as StatusMap;
  if (reading.findings.length === 0 && !reading.ended)
    reading.findings.push(
      violated(
        'RESULT_CHANNEL_INCOMPLETE',
        'the test runner never finished its session (os._exit, a killed or hung runner): its results are not final',
      ),
    );
  return reading;
}

interface ChannelRecord {
  n: number;
  k: string;
  id?: unknown;
  s?: unknown;
  what?: unknown;
}

function parseRecord(payload: string): ChannelRecord | undefined {
  try {
    const value = JSON.parse(payload) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const record = value as Partial<ChannelRecord>;
    return typeof record.n === 'number' && typeof record.k === 'string' ? (record as ChannelRecord) : undefined;
  } catch {
    return undefined;
  }
}

function macOk(mac: string, expected: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(mac)) return false;
  return timingSafeEqual(Buffer.from(mac, 'hex'), Buffer.from(expected, 'hex'));
}

/** Listed tests the channel and the log count differently (success, failure, neither), first few named. */
export function compareWithLog(o: {
  channel: StatusMap;
  log: StatusMap;
  failToPass: readonly string[];
  passToPass: readonly string[];
  mode: GradingMode;
}): IntegrityFinding[] {
  const listed = [
    ...o.failToPass.map((id) => ({ id, list: 'FAIL_TO_PASS' as const })),
    ...o.passToPass.map((id) => ({ id, list: 'PASS_TO_PASS' as const })),
  ];
  const differ = listed
    .filter(
      ({ id, list }) =>
        classifyTest(id, o.channel, { mode: o.mode, list }) !== classifyTest(id, o.log, { mode: o.mode, list }),
    )
    .map(({ id }) => id);
  if (differ.length === 0) return [];
  const shown = differ
    .slice(0, 3)
    .map((t) => `${t}: log ${o.log[t] ?? 'absent'}, channel ${o.channel[t] ?? 'absent'}`)
    .join('; ');
  return [violated('RESULT_CHANNEL_DISAGREES', `${differ.length} listed test(s) differ: ${shown}`)];
}
