import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import { createRedis, type RedisClient } from '../redis/create-redis.js';
import { GroupStore } from './group-store.js';
import { createKeyspace } from './keys.js';
import { COMPRESS_ABOVE_BYTES, decodeResultValue, encodeResultValue } from './result-codec.js';
import { ResultStore } from './result-store.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A pytest log of `lines` lines: repetitive like real ones, but every line different. */
function pytestLog(lines: number): string {
  return Array.from({ length: lines }, (_, i) => `PASSED tests/test_mod_${i % 97}.py::TestCase::test_case_${i}\n`).join(
    '',
  );
}

describe('result values in Redis', () => {
  let redis: RedisClient;
  const keys = createKeyspace(`{rf-test-${randomUUID()}}`);

  beforeAll(() => {
    redis = createRedis(redisUrl);
  });
  afterAll(async () => {
    const found = await redis.keys(`rf:${keys.prefix}:*`);
    if (found.length > 0) await redis.del(...found);
    redis.disconnect();
  });

  it('keeps small results as plain JSON and compresses large ones behind a tag byte', () => {
    const small = JSON.stringify({ a: 'x'.repeat(COMPRESS_ABOVE_BYTES - 20) });
    expect(encodeResultValue(small)).toBe(small);
    const large = JSON.stringify({ log: pytestLog(20_000) });
    const stored = encodeResultValue(large);
    expect(Buffer.isBuffer(stored)).toBe(true);
    expect((stored as Buffer)[0]).toBe(0x01);
    expect((stored as Buffer).length).toBeLessThan(large.length / 5);
    expect(decodeResultValue(stored as Buffer)).toBe(large);
    // Non-ASCII survives the round trip byte for byte.
    const accents = JSON.stringify({ log: 'café ✓ '.repeat(1000) });
    expect(decodeResultValue(encodeResultValue(accents) as Buffer)).toBe(accents);
  });

  it('a whole 1 MiB eval log round-trips through commit, get, the stream, the group stream and retract', async () => {
    const store = new ResultStore(redis, keys);
    const runId = `run-${randomUUID()}`;
    await redis.hset(keys.groupSizes(runId), 'e1', 1);
    const log = pytestLog(24_000);
    expect(Buffer.byteLength(log)).toBeGreaterThan(1024 * 1024);
    const result = resultFixture({ run_id: runId, episode_id: 'e1', worker_id: 'w1' });
    result.steps = [
      {
        index: 0,
        tool: 'execute_bash',
        args: { command: 'pytest' },
        output: log,
        output_bytes: Buffer.byteLength(log),
        truncated: false,
        exit_code: 0,
        duration_ms: 1,
        timed_out: false,
      },
    ];
    expect((await store.commit(result)).stored).toBe(true);
    const raw = await redis.getBuffer(keys.result(runId, 'e1', 0));
    expect(raw?.[0]).toBe(0x01);
    expect(raw!.length).toBeLessThan(Buffer.byteLength(log) / 5);

    expect((await store.get(runId, 'e1', 0))?.steps[0]?.output).toBe(log);
    expect((await store.read(runId)).map((item) => item.result.steps[0]?.output)).toEqual([log]);
    const [group] = (await new GroupStore(redis, keys).page(runId, '0', 10)).items;
    expect(group?.group.results.map((r) => r.steps[0]?.output)).toEqual([log]);
    const retracted = await store.retract({ runId, episodeId: 'e1', sampleIndex: 0 });
    expect(retracted).toMatchObject({ retracted: true, generation: 1 });
    expect('previous' in retracted && retracted.previous.steps[0]?.output).toBe(log);
  });

  it('still reads results stored as plain JSON before compression', async () => {
    const store = new ResultStore(redis, keys);
    const runId = `run-${randomUUID()}`;
    const result = resultFixture({ run_id: runId, episode_id: 'old', worker_id: 'w1' });
    result.metadata = { note: 'n'.repeat(5000) };
    await redis.set(keys.result(runId, 'old', 0), JSON.stringify(result));
    expect((await store.get(runId, 'old', 0))?.metadata['note']).toHaveLength(5000);
  });
});
