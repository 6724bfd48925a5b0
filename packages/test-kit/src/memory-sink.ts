import { Writable } from 'node:stream';

/** A destination that keeps what was written, for asserting on log output (à la pino's test `sink()`). */
export function memorySink(
  options: { isTTY?: boolean } = {},
): Writable & { text(): string; records(): Record<string, unknown>[]; isTTY?: boolean } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return Object.assign(sink, {
    isTTY: options.isTTY,
    text: () => chunks.join(''),
    records: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  });
}
