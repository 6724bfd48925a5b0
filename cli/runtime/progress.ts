/**
 * Progress of a long operation on stderr (stdout is kept for data). On a TTY: one line redrawn in place, ended
 * by `done()`. Elsewhere (a pipe, a log, a CI job): a plain line now and then — none for an operation that ends
 * within its first step, so short runs stay quiet.
 */
export interface ProgressLine {
  update(done: number, total: number, suffix?: string): void;
  /** Ends the line (on a TTY); safe to call more than once, and when nothing was drawn. */
  done(): void;
}

/** Plain progress lines off a TTY: at most one per this interval. */
const PLAIN_INTERVAL_MS = 2000;

export interface ProgressOptions {
  /** @defaultValue process.stderr */
  stream?: NodeJS.WriteStream;
  /** Off a TTY: `lines` (plain lines now and then) or `quiet` (for a caller that prints its own). @defaultValue 'lines' */
  offTty?: 'lines' | 'quiet';
}

export function progressLine(label: string, options: ProgressOptions = {}): ProgressLine {
  const stream = options.stream ?? process.stderr;
  if (stream.isTTY) return ttyLine(label, stream);
  return options.offTty === 'quiet' ? { update: () => undefined, done: () => undefined } : plainLines(label, stream);
}

function ttyLine(label: string, stream: NodeJS.WriteStream): ProgressLine {
  const width = 28;
  let open = false;
  return {
    update(done, total, suffix = '') {
      const ratio = total === 0 ? 1 : Math.min(1, done / total);
      const filled = Math.round(ratio * width);
      stream.write(
        `\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${done}/${total} ${suffix}\x1b[K`,
      );
      open = true;
    },
    done() {
      if (open) stream.write('\n');
      open = false;
    },
  };
}

function plainLines(label: string, stream: NodeJS.WriteStream): ProgressLine {
  let last: number | undefined;
  return {
    update(done, total, suffix = '') {
      if (done >= total) return;
      const now = performance.now();
      if (last !== undefined && now - last < PLAIN_INTERVAL_MS) return;
      last = now;
      stream.write(`${label}: ${done}/${total} ${suffix}`.trimEnd() + '\n');
    },
    done: () => undefined,
  };
}
