import { linkedAbort, type LinkedAbort, type RolloutError } from '@rollout-fleet/shared';

/**
 * A held sandbox's signal: aborts with the holder's request signal or when its lease is lost (`lose`, which also
 * tells the holder). A linked controller instead of `AbortSignal.any([request.signal, lost.signal])`: that one
 * costs ~2 KB of weak references per sandbox in Node 20, kept until a major collection; `dispose()` (release,
 * hand-over, a failed acquire) stops listening to the request's signal.
 */
export class LostSignal {
  readonly #link: LinkedAbort;
  #reason: RolloutError | undefined;
  #onLost: ((err: RolloutError) => void) | undefined;

  constructor(parent: AbortSignal | undefined) {
    this.#link = linkedAbort([parent]);
  }

  get signal(): AbortSignal {
    return this.#link.signal;
  }

  /** Why the lease was lost, if it was. */
  get reason(): RolloutError | undefined {
    return this.#reason;
  }

  /** The lease is lost: the signal aborts with `err` (unless it already has) and the holder hears of it, once. */
  lose(err: RolloutError): void {
    if (this.#reason) return;
    this.#reason = err;
    this.#link.abort(err);
    this.#onLost?.(err);
  }

  /** Called on a loss after this (not for one before: the acquire that was under way fails with it instead). */
  onLost(listener: (err: RolloutError) => void): void {
    this.#onLost = listener;
  }

  dispose(): void {
    this.#link.dispose();
  }
}
