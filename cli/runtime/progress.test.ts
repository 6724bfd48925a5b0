import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { progressLine } from './progress.js';

/** A stderr stand-in that records what is written; `isTTY` as a terminal or a pipe would have it. */
function sink(isTTY: boolean): NodeJS.WriteStream & { text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return Object.assign(stream, { isTTY, text: () => text }) as unknown as NodeJS.WriteStream & { text: () => string };
}

describe('progressLine', () => {
  it('on a TTY redraws one line and ends it once, so the next message starts on a line of its own (Ctrl-C included)', () => {
    const tty = sink(true);
    const line = progressLine('enqueue', { stream: tty });
    line.update(20, 100, 'enqueued 20');
    line.update(40, 100, 'enqueued 40');
    line.done();
    line.done();
    expect(tty.text().split('\r').filter(Boolean)).toHaveLength(2);
    expect(tty.text().endsWith(' 40% 40/100 enqueued 40\u001b[K\n')).toBe(true);
    const untouched = sink(true);
    progressLine('enqueue', { stream: untouched }).done();
    expect(untouched.text()).toBe('');
  });

  it('off a TTY prints a plain line at the first step of a long operation, then at most one per interval; nothing for one that ends at its first step', () => {
    const pipe = sink(false);
    const line = progressLine('enqueue', { stream: pipe });
    line.update(20, 100, 'enqueued 20');
    line.update(40, 100, 'enqueued 40');
    line.update(100, 100, 'enqueued 100');
    line.done();
    expect(pipe.text()).toBe('enqueue: 20/100 enqueued 20\n');
    const short = sink(false);
    progressLine('enqueue', { stream: short }).update(6, 6);
    expect(short.text()).toBe('');
    const quiet = sink(false);
    progressLine('episodes', { stream: quiet, offTty: 'quiet' }).update(1, 6);
    expect(quiet.text()).toBe('');
  });
});
