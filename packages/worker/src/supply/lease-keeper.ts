/**
 * Keeps an episode's sandbox owned while it runs: renews the lease on a heartbeat and moves the
 * platform lifetime ahead of the attempt's deadline (SetSandboxTimeout), so the lifetime stays a
 * backstop and never kills a live episode. A lease that cannot be renewed aborts the attempt.
 */
import { RolloutError, coerceError, type Logger } from '@rollout-fleet/shared';
import type { Lease, LeaseStore } from '../leases/lease-store.js';

const MINUTE_MS = 60_000;

export interface LeaseKeeperOptions {
  leases: LeaseStore;
  lease: Lease;
  logger: Logger;
  /** Epoch ms at which the platform will kill the sandbox. */
  expiresAt: number;
  /** Epoch ms at which the attempt must end. */
  deadline: number;
  extendLifetime: (seconds: number) => Promise<string | undefined>;
  /** Called when ownership is lost; the attempt should stop. */
  onLost: (err: RolloutError) => void;
  now?: () => number;
}

export class LeaseKeeper {
  readonly #o: LeaseKeeperOptions;
  readonly #timer: NodeJS.Timeout;
  #expiresAt: number;
  #busy = false;

  constructor(options: LeaseKeeperOptions) {
    this.#o = options;
    this.#expiresAt = options.expiresAt;
    this.#timer = setInterval(() => {
      // A slow Redis must not stack heartbeats.
      if (this.#busy) return;
      this.#busy = true;
      void this.beat().finally(() => {
        this.#busy = false;
      });
    }, Math.max(1000, Math.floor(options.leases.ttlMs / 3)));
    this.#timer.unref();
  }

  /** One heartbeat: renew the lease; extend the platform lifetime when it would end before the deadline. */
  async beat(): Promise<void> {
    const now = this.#o.now ?? Date.now;
    try {
      if (!(await this.#o.leases.renew(this.#o.lease))) {
        this.#o.onLost(new RolloutError('LEASE_LOST', `lease of sandbox ${this.#o.lease.sandboxId} expired`));
        return;
      }
      const margin = 5 * MINUTE_MS;
      if (this.#expiresAt - now() < margin && this.#o.deadline + margin > this.#expiresAt) {
        const seconds = Math.ceil((this.#o.deadline + margin - now()) / 1000);
        const expireAt = await this.#o.extendLifetime(seconds);
        const parsed = expireAt ? Date.parse(expireAt) : Number.NaN;
        this.#expiresAt = Number.isNaN(parsed) ? now() + seconds * 1000 : parsed;
      }
    } catch (thrown) {
      this.#o.logger.warn({ err: coerceError(thrown) }, 'lease heartbeat failed');
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
