import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { RolloutError } from '@rollout-fleet/shared';
import { SwerexTransport } from './swerex-transport.js';

/** A dispatcher that refuses every request before starting it, as a closed undici pool does. */
function refusing(error: Error): Dispatcher {
  return {
    dispatch: () => {
      throw error;
    },
  } as unknown as Dispatcher;
}

describe('SwerexTransport.send', () => {
  it('turns a dispatch that throws into a rejection, typed like any transport failure', async () => {
    const transport = new SwerexTransport({
      baseUrl: 'http://127.0.0.1:9/fn',
      apiKey: '',
      dispatcher: refusing(new Error('pool closed')),
    });
    let sync: unknown;
    let pending: Promise<unknown> | undefined;
    try {
      pending = transport.send({ method: 'GET', endpoint: 'is_alive', timeoutMs: 60_000 });
    } catch (thrown) {
      sync = thrown;
    }
    expect(sync).toBeUndefined();
    const err = await pending?.catch((thrown: unknown) => thrown);
    expect(err).toBeInstanceOf(RolloutError);
    expect((err as RolloutError).code).toBe('SWEREX_NETWORK');
    expect((err as RolloutError).message).toContain('pool closed');
  });

  it("rejects with the caller's reason when the signal is already aborted, without dispatching", async () => {
    let dispatched = 0;
    const dispatcher = {
      dispatch: () => {
        dispatched += 1;
        return true;
      },
    } as unknown as Dispatcher;
    const transport = new SwerexTransport({ baseUrl: 'http://127.0.0.1:9/fn', apiKey: '', dispatcher });
    const controller = new AbortController();
    const reason = new Error('episode cancelled');
    controller.abort(reason);
    await expect(
      transport.send({ method: 'GET', endpoint: 'is_alive', timeoutMs: 0, signal: controller.signal }),
    ).rejects.toBe(reason);
    expect(dispatched).toBe(0);
  });
});
