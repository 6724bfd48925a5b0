import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkedAbort } from './linked-abort.js';

describe('linkedAbort', () => {
  it('aborts with the reason of the first parent that aborts, and stops listening to the others', () => {
    const a = new AbortController();
    const b = new AbortController();
    const link = linkedAbort([a.signal, undefined, b.signal]);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(1);
    const reason = new Error('first');
    b.abort(reason);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe(reason);
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
    a.abort(new Error('second'));
    expect(link.signal.reason).toBe(reason);
  });

  it('is aborted at once when a parent already is, without listening to any', () => {
    const a = new AbortController();
    const b = new AbortController();
    b.abort('gone');
    const link = linkedAbort([a.signal, b.signal]);
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe('gone');
    expect(getEventListeners(a.signal, 'abort')).toHaveLength(0);
  });

  it('aborts on its own without touching the parents, and dispose() leaves a long-lived parent clean', () => {
    const shutdown = new AbortController();
    const own = linkedAbort([shutdown.signal]);
    own.abort('mine');
    expect(own.signal.reason).toBe('mine');
    expect(shutdown.signal.aborted).toBe(false);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);

    const disposed = linkedAbort([shutdown.signal]);
    disposed.dispose();
    disposed.dispose();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    shutdown.abort('late');
    expect(disposed.signal.aborted).toBe(false);
  });

  it('propagates through a chain of links, as nested AbortSignal.any did', () => {
    const root = new AbortController();
    const middle = linkedAbort([root.signal]);
    const leaf = linkedAbort([middle.signal]);
    root.abort('stop');
    expect(middle.signal.reason).toBe('stop');
    expect(leaf.signal.reason).toBe('stop');
  });
});
