/**
 * Reads every line a process writes (stdout and stderr) and looks for planted secret values in it, so a
 * sweep can say "0 secret values in any log line of any process". Lines are reassembled across chunks, so a
 * secret split between two reads is still found. Keeps the hits (process, stream, which secret, the line with
 * the value masked) and a tail of each stream for diagnostics.
 */
import type { Readable } from 'node:stream';

export interface SecretHit {
  process: string;
  stream: string;
  /** Name of the planted secret (e.g. "gateway key"), never its value. */
  secret: string;
  /** The offending line with the value masked, clipped. */
  line: string;
}

export interface Exemption {
  /** Only lines of this process and stream… */
  process: RegExp;
  stream: 'stdout' | 'stderr';
  /** …that match this, for this secret, are allowed (a banner that prints an identifier on purpose). */
  line: RegExp;
  secret: string;
}

const TAIL_CHARS = 8000;

export class SecretWatch {
  readonly hits: SecretHit[] = [];
  #lines = 0;
  #tails = new Map<string, string>();

  constructor(
    private readonly secrets: Readonly<Record<string, string>>,
    private readonly exemptions: readonly Exemption[] = [],
  ) {}

  /** Lines read so far, over every watched stream. */
  get lines(): number {
    return this.#lines;
  }

  /** Watches one stream of one process until it ends. */
  watch(process: string, stream: 'stdout' | 'stderr', readable: Readable | null | undefined): void {
    if (!readable) return;
    const where = `${process} ${stream}`;
    let partial = '';
    readable.setEncoding('utf8');
    readable.on('data', (chunk: string) => {
      const text = partial + chunk;
      const lines = text.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.check(process, stream, line);
      this.#tails.set(where, ((this.#tails.get(where) ?? '') + chunk).slice(-TAIL_CHARS));
    });
    readable.on('end', () => {
      if (partial !== '') this.check(process, stream, partial);
      partial = '';
    });
  }

  /** Checks text that did not come through a stream (a log kept in memory), line by line. */
  checkText(process: string, stream: 'stdout' | 'stderr', text: string): void {
    for (const line of text.split('\n')) if (line !== '') this.check(process, stream, line);
  }

  /** The last few thousand characters a process wrote on a stream. */
  tail(process: string, stream: 'stdout' | 'stderr'): string {
    return this.#tails.get(`${process} ${stream}`) ?? '';
  }

  private check(process: string, stream: 'stdout' | 'stderr', line: string): void {
    this.#lines += 1;
    for (const [name, value] of Object.entries(this.secrets)) {
      if (!line.includes(value)) continue;
      const exempt = this.exemptions.some(
        (e) => e.secret === name && e.stream === stream && e.process.test(process) && e.line.test(line),
      );
      if (exempt) continue;
      this.hits.push({
        process,
        stream,
        secret: name,
        line: line
          .split(value)
          .join('<' + name + '>')
          .slice(0, 400),
      });
    }
  }
}
