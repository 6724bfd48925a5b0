/**
 * Wakes this process's slot waiters when a slot is freed anywhere in the fleet, so freed capacity is reused at
 * once rather than at a waiter's next poll (polls back off to 2 s: at the end of a sweep, with the queue empty,
 * nobody else asks for a freed slot and the create rate went unused meanwhile).
 *
 * Wire contract: leases/slots/release.lua publishes, on the channel `<slot base>slot-freed`, the member of one
 * registered waiter (`wait.lua`, `reserve.lua`), chosen at random; every process listens there and wakes that waiter if it is its
 * own. A wake is only a hint: the waiter asks reserve.lua again like any acquirer, and its poll stays the fallback
 * for wakes that go nowhere (the listener reconnecting, the chosen waiter gone meanwhile, a slot freed by a
 * lease's expiry or by leaving the starting cap, neither of which publishes).
 */
import type { Logger, RedisClient } from '@rollout-fleet/shared';

interface Sleeper {
  wake: () => void;
}

export class SlotWaker {
  readonly #redis: RedisClient;
  readonly #channel: string;
  readonly #logger: Logger;
  /** Waiters of this process (registered in Redis); a wake that comes while one is not sleeping is kept for it. */
  readonly #waiters = new Map<string, Sleeper | 'woken' | 'idle'>();
  #subscriber: RedisClient | undefined;
  #listening: Promise<void> | undefined;
  #closed = false;

  constructor(o: { redis: RedisClient; channel: string; logger: Logger }) {
    this.#redis = o.redis;
    this.#channel = o.channel;
    this.#logger = o.logger;
  }

  /** `waiter` is about to register as waiting: wakes for it from now on count, even before it sleeps. */
  register(waiter: string): void {
    if (!this.#waiters.has(waiter)) this.#waiters.set(waiter, 'idle');
    // Not awaited: an acquirer never waits on the listener (Redis may be down); until it listens, waiters poll.
    void this.#listen();
  }

  /** `waiter` stopped waiting (it got a slot, gave up or was aborted). */
  unregister(waiter: string): void {
    const state = this.#waiters.get(waiter);
    this.#waiters.delete(waiter);
    if (typeof state === 'object') state.wake();
  }

  /** Sleeps up to `ms`; returns early (true) when a slot was freed for `waiter`. Rejects when `signal` aborts. */
  sleep(waiter: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    signal?.throwIfAborted();
    if (this.#waiters.get(waiter) === 'woken') {
      this.#waiters.set(waiter, 'idle');
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve, reject) => {
      const finish = (woken: boolean, err?: unknown): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.#waiters.get(waiter) === sleeper) this.#waiters.set(waiter, 'idle');
        if (err === undefined) resolve(woken);
        else reject(err);
      };
      const sleeper: Sleeper = { wake: () => finish(true) };
      const onAbort = (): void => finish(false, signal?.reason);
      const timer = setTimeout(() => finish(false), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.set(waiter, sleeper);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const waiter of [...this.#waiters.keys()]) this.unregister(waiter);
    this.#subscriber?.disconnect();
    this.#subscriber = undefined;
  }

  #onMessage(waiter: string): void {
    const state = this.#waiters.get(waiter);
    if (state === undefined) return;
    if (typeof state === 'object') state.wake();
    else this.#waiters.set(waiter, 'woken');
  }

  /** Subscribes once, on first need; when that fails, waiters just poll (and the next registration tries again). */
  #listen(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#listening ??= (async () => {
      const subscriber = this.#redis.duplicate();
      this.#subscriber = subscriber;
      subscriber.on('message', (channel: string, message: string) => {
        if (channel === this.#channel) this.#onMessage(message);
      });
      try {
        await subscriber.subscribe(this.#channel);
      } catch (err) {
        this.#logger.warn({ err }, 'cannot listen for freed sandbox slots; slot waiters poll');
        subscriber.disconnect();
        this.#subscriber = undefined;
        this.#listening = undefined;
      }
      if (this.#closed) subscriber.disconnect();
    })();
    return this.#listening;
  }
}
