/**
 * The chaos sweep's checks can fail: each invariant is fed the fault it must catch (a duplicate stream line, a
 * lost result, a wrong outcome, a failure outside the error table or charged to the model, a secret split across
 * two reads of a process's output) and must count it; a clean set counts zero.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EpisodeResultSchema, type EpisodeResult } from '@rollout-fleet/shared';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import { judgeResults } from '../bench/lib/chaos-sweep.js';
import { SecretWatch } from '../bench/lib/secret-watch.js';

const expected = { 'pyutils__calc-add': { resolved: true }, 'pyutils__slug-lower': { resolved: false } };

function result(episodeId: string, sample: number, patch: Partial<EpisodeResult> = {}): EpisodeResult {
  return EpisodeResultSchema.parse(
    resultFixture({
      run_id: 'chaos',
      episode_id: episodeId,
      instance_id: episodeId,
      sample_index: sample,
      resolved: expected[episodeId as keyof typeof expected]?.resolved ?? null,
      finished_at: '2026-11-30T00:00:00.000Z',
      ...patch,
    }),
  );
}

const episodes = [
  { episode_id: 'pyutils__calc-add', sample_index: 0 },
  { episode_id: 'pyutils__calc-add', sample_index: 1 },
  { episode_id: 'pyutils__slug-lower', sample_index: 0 },
];
const clean = [
  result('pyutils__calc-add', 0),
  result('pyutils__calc-add', 1),
  result('pyutils__slug-lower', 0, { reward: 0 }),
];
const labels = ['a:0', 'a:1', 's:0'];
const counts = (judged: ReturnType<typeof judgeResults>): Record<string, number> =>
  Object.fromEntries(judged.invariants.map((i) => [i.name, i.ok ? 0 : i.count]));

describe('chaos invariants on results', () => {
  it('hold for one correct result per episode', () => {
    const judged = judgeResults({ episodes, results: clean, streamLabels: labels, indexed: 3, expected });
    expect(judged.invariants.every((i) => i.ok)).toBe(true);
    expect(judged.invariants.map((i) => i.count)).toEqual([3, 0, 0, 0]);
  });

  it('count a lost result, a duplicate stream line and a duplicate result', () => {
    expect(
      judgeResults({ episodes, results: clean.slice(0, 2), streamLabels: labels.slice(0, 2), indexed: 2, expected })
        .invariants[0],
    ).toMatchObject({ count: 2, ok: false });
    // Same count of results, but one episode twice and one missing.
    expect(
      judgeResults({ episodes, results: [clean[0]!, clean[0]!, clean[2]!], streamLabels: labels, indexed: 3, expected })
        .invariants.slice(0, 2)
        .map((i) => i.ok),
    ).toEqual([false, false]);
    expect(
      counts(judgeResults({ episodes, results: clean, streamLabels: [...labels, 'a:0'], indexed: 3, expected })),
    ).toMatchObject({ 'duplicate results': 1 });
  });

  it('count a completed outcome that differs from the expected one', () => {
    const wrong = [clean[0]!, result('pyutils__calc-add', 1, { resolved: false, reward: 0 }), clean[2]!];
    const judged = judgeResults({ episodes, results: wrong, streamLabels: labels, indexed: 3, expected });
    expect(judged.mismatches).toEqual(['pyutils__calc-add#1: resolved false, expected true (no failure)']);
  });

  it('count failures outside the error table, with the wrong class, charged to the model or with a reward', () => {
    const attempt = { attempt: 1, worker_id: 'w', sandbox_id: null, started_at: 'x', ended_at: 'x' };
    const bad = [
      result('pyutils__calc-add', 0, {
        status: 'failed',
        resolved: null,
        reward: null,
        failure: { code: 'GATEWAY_ERROR', class: 'model', message: '' },
      }),
      result('pyutils__calc-add', 1, {
        status: 'failed',
        resolved: null,
        reward: 0,
        failure: { code: 'GATEWAY_ERROR', class: 'infra', message: '' },
      }),
      result('pyutils__slug-lower', 0, {
        reward: 0,
        attempts: [{ ...attempt, failure: { code: 'SANDBOX_DEAD', class: 'input', message: '' } }],
      }),
    ];
    const judged = judgeResults({ episodes, results: bad, streamLabels: labels, indexed: 3, expected });
    expect(judged.unclassified).toEqual([
      'pyutils__calc-add#0: failed GATEWAY_ERROR/model with reward null',
      'pyutils__calc-add#0: GATEWAY_ERROR/model',
      'pyutils__calc-add#1: failed GATEWAY_ERROR/infra with reward 0',
      'pyutils__slug-lower#0 attempt 1: SANDBOX_DEAD/input',
    ]);
  });
});

describe('secret watch', () => {
  it('finds a secret split across two reads, masks it, and allows only the declared exemption', async () => {
    const watch = new SecretWatch({ 'gateway key': 'gwkey-0123456789', 'access key id': 'AKLT42' }, [
      { process: /^host$/, stream: 'stdout', line: /^ {2}VEFAAS_ACCESS_KEY=/, secret: 'access key id' },
    ]);
    const out = new PassThrough();
    const err = new PassThrough();
    watch.watch('host', 'stdout', out);
    watch.watch('worker-1', 'stderr', err);
    out.write('  VEFAAS_ACCESS_KEY=AKLT42\nready\n');
    err.write('{"msg":"calling with gwkey-01234');
    err.write('56789 in it"}\n{"msg":"AKLT42 again"}\n');
    err.end('no newline at the end gwkey-0123456789');
    out.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(watch.hits).toEqual([
      {
        process: 'worker-1',
        stream: 'stderr',
        secret: 'gateway key',
        line: '{"msg":"calling with <gateway key> in it"}',
      },
      { process: 'worker-1', stream: 'stderr', secret: 'access key id', line: '{"msg":"<access key id> again"}' },
      { process: 'worker-1', stream: 'stderr', secret: 'gateway key', line: 'no newline at the end <gateway key>' },
    ]);
    expect(watch.lines).toBe(5);
  });
});
