import { setTimeout as delay } from 'node:timers/promises';

/** Waits `ms`; an abort rejects with the signal's own reason (e.g. a WORKER_SHUTDOWN RolloutError), not AbortError. */
export async function abortableDelay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal === undefined) return delay(ms);
  try {
    await delay(ms, undefined, { signal });
  } catch (thrown) {
    if (signal.aborted) throw signal.reason;
    throw thrown;
  }
}
