/** A one-line progress display on a TTY (stderr); silent elsewhere so logs and pipes stay clean. */
export interface ProgressLine {
  update(done: number, total: number, suffix?: string): void;
  done(): void;
}

export function progressLine(label: string, stream: NodeJS.WriteStream = process.stderr): ProgressLine {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  const width = 28;
  return {
    update(done, total, suffix = '') {
      const ratio = total === 0 ? 1 : Math.min(1, done / total);
      const filled = Math.round(ratio * width);
      stream.write(`\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${String(Math.round(ratio * 100)).padStart(3)}% ${done}/${total} ${suffix}\x1b[K`);
    },
    done() {
      stream.write('\n');
    },
  };
}
