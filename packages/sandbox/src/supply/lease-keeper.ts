/**
 * Keeps one slot owned while its holder uses it: renews the lease on a heartbeat (every third of its TTL) and,
 * once there is a sandbox, moves the platform lifetime ahead of the holder's deadline (SetSandboxTimeout) so
 * the lifetime stays a backstop and never kills live work. A renewal that fails means the lease is gone (the
 * reaper may kill the sandbox) or someone else holds the slot now: `onLost` is told once, and beats stop.
 */
import { RolloutError, coerceError, type Logger } from '@rollout-fleet/shared';
import type { LeaseStore } from '../leases/lease-store.js';

const MINUTE_MS = 60_000;
/** The platform lifetime is extended once it would end within this margin before the holder's deadline. */
export const LIFETIME_MARGIN_MS = 5 * MINUTE_MS;

export interface LeaseKeeperOptions {
  leases: LeaseStore;
  ticket: string;
  owner: string;
  logger: Logger;
  /** Epoch ms at which the platform will kill the sandbox (this process's estimate). */
  expiresAt: number;
  /** Epoch ms until which the holder needs the sandbox. */
  deadline: number;
  /**
   * SetSandboxTimeout for `seconds` from now; resolves to the platform's new ExpireAt, or undefined when nothing was
   * extended (no sandbox yet). The keeper counts the new end itself (see `beat`).
   */
  extendLifetime: (seconds: number) => Promise<string | undefined>;
  /** Ownership is lost; the holder should stop. Called at most once. */
  onLost: (err: RolloutError) => void;
  now?: () => number;
}

export class LeaseKeeper {
  readonly #o: LeaseKeeperOptions;
  readonly #timer: NodeJS.Timeout;
  #expiresAt: number;
  #deadline: number;
  #busy = false;
  #stopped = false;

  constructor(options: LeaseKeeperOptions) {
    this.#o = options;
    this.#expiresAt = options.expiresAt;
    this.#deadline = options.deadline;
    this.#timer = setInterval(
      () => {
        // A slow Redis must not stack heartbeats.
        if (this.#busy || this.#stopped) return;
        this.#busy = true;
        void this.beat().finally(() => {
          this.#busy = false;
        });
      },
      Math.max(250, Math.floor(options.leases.ttlMs / 3)),
    );
    this.#timer.unref();
  }

  /** The holder now needs the sandbox until `deadline` (epoch ms); the next beat extends the lifetime if needed. */
  setDeadline(deadline: number): void {
    this.#deadline = deadline;
  }

  setExpiresAt(expiresAt: number): void {
    this.#expiresAt = expiresAt;
  }

  /** One heartbeat: renew the lease; extend the platform lifetime when it would end before the deadline. */
  async beat(): Promise<void> {
    if (this.#stopped) return;
    const now = this.#o.now ?? Date.now;
    try {
      if (!(await this.#o.leases.renew(this.#o.ticket, this.#o.owner))) {
        if (this.#stopped) return;
        this.stop();
        this.#o.onLost(
          new RolloutError('LEASE_LOST', `the lease of sandbox slot ${this.#o.ticket} expired or was taken over`),
        );
        return;
      }
      const margin = LIFETIME_MARGIN_MS;
      if (this.#expiresAt - now() < margin && this.#deadline + margin > this.#expiresAt) {
        const sentAt = now();
        const seconds = Math.ceil((this.#deadline + margin - sentAt) / 1000);
        const expireAt = await this.#o.extendLifetime(seconds);
        if (expireAt === undefined) return;
        // Counted on this machine's clock from before the call, not taken from the platform's ExpireAt: the
        // platform counts from when it gets the call (and rounds up), so this is never late, and no two machines'
        // clocks are compared.
        this.#expiresAt = sentAt + seconds * 1000;
      }
    } catch (thrown) {
      this.#o.logger.warn({ err: coerceError(thrown) }, 'lease heartbeat failed');
    }
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }
}
