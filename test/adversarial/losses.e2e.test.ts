/**
 * The model's losses are the model's, an outage's are not (docs/adversarial-grading.md, "Never 0 for infra";
 * issue 24 item 4), both directions against the real pipeline and vefaas-local's injected faults:
 * - a background process armed to kill the sandbox when the patch is taken is stopped first: the fix is graded 1
 *   (without the stop it kills the server during extraction in every attempt);
 * - a step that kills its own server in every attempt is graded 0, never retried into null;
 * - the platform killing every sandbox before any model command ran (a fault on session creation) ends null;
 * - with that outage in the fleet ledger, the same server-killing step ends null, not 0.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeResult } from '@rollout-fleet/shared';
import { REDIS_URL, startHost, type Host } from '../support/pipeline-harness.js';
import { FIX, bash, runCases, writeFile, type Case } from './adversarial-kit.js';

/** Kills the SWE-ReX server (the session's parent) as soon as any process of the extraction shows up. */
const ARM_KILLER = bash(
  [
    writeFile(
      '/tmp/killer.sh',
      [
        'while :; do',
        '  for f in /proc/[0-9]*/cmdline; do',
        '    if grep -q -a rf-extract "$f" 2>/dev/null || grep -q -a rf-stop "$f" 2>/dev/null; then kill -9 "$1"; fi',
        '  done',
        '  sleep 0.01',
        'done',
      ].join('\n'),
    ),
    'nohup sh /tmp/killer.sh $PPID > /dev/null 2>&1 &',
  ].join('\n'),
);
const KILL_OWN_SERVER = bash('kill -9 $PPID');

describe('losses: the model’s are graded 0, the platform’s end null', () => {
  let host: Host;
  const closers: Array<() => Promise<void>> = [];
  let normal: Map<string, EpisodeResult>;
  let outage: Map<string, EpisodeResult>;
  let outageCause: Map<string, EpisodeResult>;

  beforeAll(async () => {
    host = await startHost();
    const cases: Case[] = [
      { id: 'armed-killer-fix', runner: 'unittest', trajectory: [FIX, ARM_KILLER] },
      { id: 'armed-killer-pytest', runner: 'pytest', trajectory: [FIX, ARM_KILLER] },
      { id: 'kill-own-server', runner: 'unittest', trajectory: [FIX, KILL_OWN_SERVER] },
    ];
    const a = await runCases(host, cases, { runId: 'adv-losses' });
    closers.push(a.close);
    normal = a.results;

    // An outage: the platform kills every sandbox while its first session starts (no model command ran yet).
    const prefix = `{rf-test-${randomUUID()}}`;
    host.handle.faults.configure({ gateway: { instanceDeathRate: { '/create_session': 1 } } });
    const b = await runCases(
      host,
      ['a', 'b', 'c', 'd'].map((x) => ({ id: `platform-${x}`, runner: 'unittest' as const, trajectory: [FIX] })),
      { runId: 'adv-outage', env: { RF_PREFIX: prefix, RF_ATTEMPTS: '1', REDIS_URL } },
    );
    closers.push(b.close);
    outageCause = b.results;
    host.handle.faults.reset();
    // Within the outage's window, a model that kills its own server cannot be told from the platform: null.
    const c = await runCases(
      host,
      [{ id: 'kill-own-server-in-outage', runner: 'unittest', trajectory: [FIX, KILL_OWN_SERVER] }],
      {
        runId: 'adv-outage-2',
        env: { RF_PREFIX: prefix, REDIS_URL },
      },
    );
    closers.push(c.close);
    outage = c.results;
  }, 420_000);
  afterAll(async () => {
    host?.handle.faults.reset();
    for (const close of closers) await close();
    await host?.close();
  });

  it.each(['armed-killer-fix', 'armed-killer-pytest'])(
    '%s: a process armed to kill the sandbox at extraction is stopped first; the fix is graded 1 in one attempt',
    (id) => {
      const r = normal.get(id);
      expect(r, JSON.stringify(r?.attempts)).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
      expect(r?.attempts).toHaveLength(1);
    },
  );

  it('a step that kills its own server in every attempt: graded 0 (model), never retried into null', () => {
    const r = normal.get('kill-own-server');
    expect(r).toMatchObject({ status: 'completed', resolved: false, reward: 0 });
    expect(r?.failure?.class).toBe('model');
    expect(r?.attempts.every((a) => a.lost_after_model === true && a.lost_in === 'step')).toBe(true);
  });

  it('the platform killing sandboxes before any model command ran: failed, reward null, each a clean loss', () => {
    const all = [...outageCause.values()];
    const failed = all.filter((r) => r.status === 'failed');
    // The fault kills the instance while its first session starts; one that answered first may still get through.
    expect(failed.length).toBeGreaterThanOrEqual(3);
    for (const r of failed) {
      expect(r).toMatchObject({ reward: null, resolved: null });
      expect(r.attempts[0]).toMatchObject({ lost_after_model: false, lost_in: 'setup' });
    }
    // None of them was ever graded 0.
    expect(all.every((r) => r.reward !== 0)).toBe(true);
  });

  it('during that outage, the same server-killing step ends null (infra), not 0', () => {
    const r = outage.get('kill-own-server-in-outage');
    expect(r, JSON.stringify(r?.failure)).toMatchObject({ status: 'failed', reward: null });
    expect(r?.attempts.every((a) => a.lost_after_model === true)).toBe(true);
  });
});
