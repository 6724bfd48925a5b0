/**
 * SlotWaker on real Redis: a waiter named on the slot-freed channel wakes (also when the wake comes before it
 * sleeps), others sleep on until their poll, aborts reject, and close ends the listener.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger, createRedis, type RedisClient } from '@rollout-fleet/shared';
import { SlotWaker } from './slot-waker.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const logger = createLogger({ level: 'silent' });
let redis: RedisClient;

beforeAll(() => {
  redis = createRedis(REDIS_URL);
});
afterAll(() => {
  redis.disconnect();
});

/** A waker on a fresh channel, listening once `numsub` says so. */
async function listeningWaker(waiter: string): Promise<{ waker: SlotWaker; channel: string }> {
  const channel = `rf:{rf-test-${randomUUID()}}:slot-freed`;
  const waker = new SlotWaker({ redis, channel, logger });
  waker.register(waiter);
  await vi.waitFor(async () => expect((await redis.pubsub('NUMSUB', channel))[1]).toBe(1), { interval: 5 });
  return { waker, channel };
}

describe('SlotWaker', () => {
  it('wakes the waiter a release names, before its poll', async () => {
    const { waker, channel } = await listeningWaker('w1');
    const sleeping = waker.sleep('w1', 600_000);
    await redis.publish(channel, 'w1');
    await expect(sleeping).resolves.toBe(true);
    await waker.close();
  }, 10_000);

  it('keeps a wake that came before the waiter slept, and ignores wakes for others', async () => {
    const { waker, channel } = await listeningWaker('w1');
    waker.register('w2');
    await redis.publish(channel, 'someone-in-another-process');
    await redis.publish(channel, 'w2');
    await vi.waitFor(async () => expect(await waker.sleep('w2', 0)).toBe(true), { interval: 5 });
    // w1 was never named: it sleeps out its poll.
    await expect(waker.sleep('w1', 20)).resolves.toBe(false);
    await waker.close();
  });

  it('an abort rejects the sleep with its reason; an unregistered waiter keeps no wake', async () => {
    const { waker, channel } = await listeningWaker('w1');
    const controller = new AbortController();
    const sleeping = waker.sleep('w1', 600_000, controller.signal);
    const reason = new Error('cancelled');
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    waker.unregister('w1');
    waker.register('marker');
    await redis.publish(channel, 'w1');
    await redis.publish(channel, 'marker');
    // Delivered in order: once the marker's wake is in, w1's was handled (and dropped).
    await expect(waker.sleep('marker', 600_000)).resolves.toBe(true);
    await expect(waker.sleep('w1', 20)).resolves.toBe(false);
    await waker.close();
    await vi.waitFor(async () => expect((await redis.pubsub('NUMSUB', channel))[1]).toBe(0), { interval: 5 });
  });
});
