/**
 * The loss ledger against real Redis, raced: many workers recording clean losses at once must count each episode
 * once, see the outage threshold crossed exactly when it is, and forget losses outside the window.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyspace, createRedis, type RedisClient } from '@rollout-fleet/shared';
import { createLossLedger } from './loss-ledger.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('loss ledger', () => {
  let clients: RedisClient[] = [];

  beforeAll(() => {
    clients = Array.from({ length: 8 }, () => createRedis(REDIS_URL));
  });
  afterAll(async () => {
    for (const c of clients) await c.quit();
  });

  const keysFor = () => createKeyspace(`{rf-test-${randomUUID()}}`);

  it('racing records: 200 losses of 50 episodes from 8 clients count 50, and every answer is a prefix count', async () => {
    const keys = keysFor();
    const ledgers = clients.map((c) => createLossLedger(c, keys, { windowS: 60, cleanLosses: 50 }));
    const labels = Array.from({ length: 200 }, (_, i) => `run|ep-${i % 50}|0`);
    const answers = await Promise.all(labels.map((label, i) => ledgers[i % ledgers.length]!.recordClean(label)));
    // Each call saw a count between 1 and 50 and the last answer of all is 50: no episode counted twice.
    expect(Math.max(...answers.map((a) => a.count))).toBe(50);
    expect(answers.every((a) => a.count >= 1 && a.count <= 50)).toBe(true);
    expect(await clients[0]!.zcard(keys.sandboxLosses())).toBe(50);
    // Exactly at the threshold: an outage; the asking episode itself is not counted.
    expect(await ledgers[0]!.outageAround(0, 'run|other|0')).toBe(true);
    expect(await ledgers[0]!.outageAround(0, 'run|ep-0|0')).toBe(false);
  });

  it('racing first losses: of 8 clients recording distinct episodes at once, exactly one sees the threshold first', async () => {
    const keys = keysFor();
    const ledgers = clients.map((c) => createLossLedger(c, keys, { windowS: 60, cleanLosses: 8 }));
    const answers = await Promise.all(ledgers.map((l, i) => l.recordClean(`run|e${i}|0`)));
    expect(answers.map((a) => a.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('losses outside the window around a moment do not count; the moment is Redis time', async () => {
    const keys = keysFor();
    const ledger = createLossLedger(clients[0]!, keys, { windowS: 1, cleanLosses: 2 });
    const first = await ledger.recordClean('run|a|0');
    await ledger.recordClean('run|b|0');
    expect(await ledger.outageAround(first.atMs, 'run|x|0')).toBe(true);
    // An hour earlier (or later) nothing was lost.
    expect(await ledger.outageAround(first.atMs - 3_600_000, 'run|x|0')).toBe(false);
    expect(await ledger.outageAround(first.atMs + 3_600_000, 'run|x|0')).toBe(false);
  });

  it('below the threshold is no outage', async () => {
    const keys = keysFor();
    const ledger = createLossLedger(clients[0]!, keys, { windowS: 60, cleanLosses: 3 });
    await ledger.recordClean('run|a|0');
    await ledger.recordClean('run|a|0');
    await ledger.recordClean('run|b|0');
    expect(await ledger.outageAround(0, 'run|x|0')).toBe(false);
  });
});
