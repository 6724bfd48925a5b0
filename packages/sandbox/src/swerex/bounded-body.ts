/**
 * Reads an HTTP body with bounded memory. SWE-ReX answers carry a command's whole output in one JSON string
 * (`output`, `stdout`, `content`), however large; a step that prints 500 MB must not make the worker hold
 * 500 MB. While the bytes stream in, every JSON string literal longer than `maxBytes` is cut to its head and
 * its tail (half each) with the usual truncation marker in between — the text stays valid JSON, and the
 * marker and the returned `truncated` map give the string's true size (its decoded UTF-8 bytes). A body that
 * is not JSON keeps its first `maxBytes`. Peak memory is about `maxBytes` per large string, whatever the size
 * of the body.
 *
 * The scan is byte-level over UTF-8 JSON: outside strings it tracks nesting and which top-level key a value
 * belongs to; inside strings it skips to the next quote or backslash (`indexOf`, native speed), keeps escape
 * sequences whole across the cut and across chunk boundaries, and never cuts a multi-byte character.
 */

/** The truncation marker steps use too (output-limit.ts words it the same way). */
export function truncationMarker(totalBytes: number, omittedBytes: number): string {
  return `\n[... output truncated: ${totalBytes} bytes in total, ${omittedBytes} bytes omitted ...]\n`;
}

export interface TruncatedField {
  /** Decoded UTF-8 bytes of the whole string. */
  totalBytes: number;
  /** Decoded UTF-8 bytes left out between head and tail. */
  omittedBytes: number;
}

export interface BoundedBody {
  text: string;
  /** Top-level object fields whose string value was cut, by key. */
  truncated: Record<string, TruncatedField>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Tail pieces grow to about this size before a new one starts (dropping is per piece). */
const PIECE = 64 * 1024;

/** Reads `body` to the end, keeping every string literal at most about `maxBytes` long. */
export async function readBoundedBody(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<BoundedBody> {
  const collector = new BoundedBodyCollector(maxBytes);
  for await (const chunk of body) collector.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return collector.finish();
}

/**
 * The same answer as BoundedJsonReader, cheaper for the common case: a body no longer than half the limit
 * cannot hold a string the reader would cut (it cuts past `maxBytes / 2` raw bytes), so its chunks are only
 * kept and decoded once at the end — no byte scan. The first chunk that takes the body past half the limit
 * hands everything kept so far to a BoundedJsonReader, which reads the rest as before (memory stays bounded).
 * Answers of a few hundred bytes at a thousand steps a second made the scan a visible share of a worker's CPU.
 */
export class BoundedBodyCollector {
  readonly #max: number;
  readonly #fastLimit: number;
  #chunks: Buffer[] = [];
  #length = 0;
  #reader: BoundedJsonReader | undefined;

  constructor(maxBytes: number) {
    this.#max = maxBytes;
    // BoundedJsonReader's own bound (it never keeps less than 64 bytes), halved.
    this.#fastLimit = Math.floor(Math.max(64, maxBytes) / 2);
  }

  push(chunk: Buffer): void {
    if (this.#reader) {
      this.#reader.push(chunk);
      return;
    }
    this.#length += chunk.length;
    this.#chunks.push(chunk);
    if (this.#length <= this.#fastLimit) return;
    this.#reader = new BoundedJsonReader(this.#max);
    for (const kept of this.#chunks) this.#reader.push(kept);
    this.#chunks = [];
  }

  finish(): BoundedBody {
    if (this.#reader) return this.#reader.finish();
    const chunks = this.#chunks;
    const text =
      chunks.length === 1
        ? (chunks[0] as Buffer).toString('utf8')
        : Buffer.concat(chunks, this.#length).toString('utf8');
    return { text, truncated: {} };
  }
}

/** Start of a UTF-8 character (not a continuation byte). */
function charStart(buf: Buffer, at: number): number {
  let i = at;
  while (i > 0 && i > at - 3 && ((buf[i] ?? 0) & 0xc0) === 0x80) i -= 1;
  return i;
}

/** Where an incomplete UTF-8 character at the end of `buf` starts (`buf.length` when the end is whole). */
function incompleteTail(buf: Buffer): number {
  for (let back = 1; back <= 3 && back <= buf.length; back++) {
    const b = buf[buf.length - back] as number;
    if ((b & 0xc0) === 0x80) continue;
    const width = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return back < width ? buf.length - back : buf.length;
  }
  return buf.length;
}

/** UTF-8 bytes of one UTF-16 code unit written as `\uXXXX` (a surrogate half counts 2: a pair is 4). */
function utf8LengthOfUnit(unit: number): number {
  if (unit < 0x80) return 1;
  if (unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff)) return 2;
  return 3;
}

export class BoundedJsonReader {
  readonly #max: number;
  readonly #half: number;
  readonly #out: Buffer[] = [];
  #started = false;
  #json = true;
  #rawKept = 0;
  #rawTotal = 0;
  /** The start of an escape sequence cut by a chunk boundary, prepended to the next chunk. */
  #carry: Buffer | undefined;
  // Outside strings.
  #depth = 0;
  #expectKey = false;
  #lastKey = '';
  // Inside a string literal.
  #inString = false;
  #isKey = false;
  #key: Buffer[] = [];
  #decoded = 0;
  #raw = 0;
  #overflow = false;
  #headDecoded = 0;
  /** Past the head: pieces of whole spans (escape-complete), the oldest dropped once the rest covers half. */
  #tail: Array<{ parts: Buffer[]; length: number }> = [];
  #tailLen = 0;
  readonly truncated: Record<string, TruncatedField> = {};

  constructor(maxBytes: number) {
    this.#max = Math.max(64, maxBytes);
    this.#half = Math.floor(this.#max / 2);
  }

  push(chunk: Buffer): void {
    this.#rawTotal += chunk.length;
    let buf = chunk;
    if (this.#carry) {
      buf = Buffer.concat([this.#carry, chunk]);
      this.#carry = undefined;
    }
    let i = 0;
    if (!this.#started) {
      while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i += 1;
      if (i === buf.length) {
        this.#emit(buf);
        return;
      }
      this.#started = true;
      this.#json = buf[i] === 0x7b || buf[i] === 0x5b;
    }
    if (!this.#json) {
      const room = Math.max(0, this.#max - this.#rawKept);
      if (room > 0) this.#emit(buf.subarray(0, Math.min(room, buf.length)));
      return;
    }
    while (i < buf.length) i = this.#inString ? this.#stringBytes(buf, i) : this.#structure(buf, i);
  }

  finish(): BoundedBody {
    let text = Buffer.concat(this.#out).toString('utf8');
    if (!this.#json && this.#rawTotal > this.#rawKept)
      text += truncationMarker(this.#rawTotal, this.#rawTotal - this.#rawKept);
    return { text, truncated: this.truncated };
  }

  /** Structure between strings: nesting, keys vs values; returns where the next string's content starts. */
  #structure(buf: Buffer, from: number): number {
    let i = from;
    for (; i < buf.length; i++) {
      const c = buf[i];
      if (c === QUOTE) break;
      if (c === 0x7b || c === 0x5b) {
        this.#depth += 1;
        this.#expectKey = c === 0x7b && this.#depth === 1;
      } else if (c === 0x7d || c === 0x5d) this.#depth -= 1;
      else if (c === 0x2c && this.#depth === 1) this.#expectKey = true;
      else if (c === 0x3a && this.#depth === 1) this.#expectKey = false;
    }
    this.#emit(buf.subarray(from, Math.min(i + 1, buf.length)));
    if (i < buf.length) {
      this.#inString = true;
      this.#isKey = this.#expectKey && this.#depth === 1;
      this.#key = [];
      this.#decoded = 0;
      this.#raw = 0;
      this.#overflow = false;
      this.#tail = [];
      this.#tailLen = 0;
    }
    return i + 1;
  }

  /**
   * String content from `from` up to the closing quote or the chunk's end, as one span of whole escape
   * sequences (an escape cut by the chunk boundary is carried to the next chunk); returns where it stopped.
   */
  #stringBytes(buf: Buffer, from: number): number {
    let i = from;
    let closed = false;
    const headOpen = (): boolean => !this.#overflow && !this.#isKey;
    // `i` is always a safe boundary: never inside an escape sequence.
    for (;;) {
      const quote = buf.indexOf(QUOTE, i);
      const slash = buf.indexOf(BACKSLASH, i);
      const next = quote < 0 ? slash : slash < 0 ? quote : Math.min(quote, slash);
      const plainEnd = next < 0 ? buf.length : next;
      if (plainEnd > i && headOpen() && this.#raw + (plainEnd - from) > this.#half) {
        // The head ends inside escape-free text: cut there, on a character boundary.
        const cut = Math.max(i, charStart(buf, from + Math.max(0, this.#half - this.#raw)));
        this.#span(buf.subarray(from, cut));
        this.#startOverflow();
        return cut;
      }
      if (next < 0) {
        // A character cut by the chunk boundary goes whole into the next chunk, so no span ends inside one.
        i = Math.max(from, incompleteTail(buf));
        if (i < buf.length) this.#carry = Buffer.from(buf.subarray(i));
        break;
      }
      if (next === quote) {
        i = quote;
        closed = true;
        break;
      }
      const width = buf[slash + 1] === 0x75 ? 6 : 2;
      if (slash + width > buf.length) {
        this.#carry = Buffer.from(buf.subarray(slash));
        i = slash;
        break;
      }
      if (headOpen() && this.#raw + (slash + width - from) > this.#half) {
        // The head ends before this escape sequence, which stays whole.
        this.#span(buf.subarray(from, slash));
        this.#startOverflow();
        return slash;
      }
      i = slash + width;
    }
    this.#span(buf.subarray(from, i));
    if (!closed) return this.#carry ? buf.length : i;
    this.#endString();
    this.#emit(buf.subarray(i, i + 1));
    return i + 1;
  }

  #startOverflow(): void {
    this.#overflow = true;
    this.#headDecoded = this.#decoded;
    this.#tail = [];
    this.#tailLen = 0;
  }

  /** Appends escape-complete string content to the head (out) or, past the head, to the tail. */
  #span(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#raw += bytes.length;
    this.#decoded += decodedLength(bytes);
    if (this.#isKey && this.#raw <= 256) this.#key.push(Buffer.from(bytes));
    if (!this.#overflow) {
      this.#emit(bytes);
      return;
    }
    const last = this.#tail[this.#tail.length - 1];
    if (last && last.length < PIECE) {
      last.parts.push(bytes);
      last.length += bytes.length;
    } else this.#tail.push({ parts: [bytes], length: bytes.length });
    this.#tailLen += bytes.length;
    while (this.#tail.length > 1 && this.#tailLen - (this.#tail[0] as { length: number }).length >= this.#half) {
      this.#tailLen -= (this.#tail.shift() as { length: number }).length;
    }
  }

  #endString(): void {
    this.#inString = false;
    if (this.#isKey) {
      this.#lastKey = Buffer.concat(this.#key).toString('utf8');
      return;
    }
    if (!this.#overflow) return;
    const tail = Buffer.concat(this.#tail.flatMap((piece) => piece.parts));
    const omitted = this.#decoded - this.#headDecoded - decodedLength(tail);
    this.#emit(Buffer.from(JSON.stringify(truncationMarker(this.#decoded, omitted)).slice(1, -1), 'utf8'));
    this.#emit(tail);
    if (this.#depth === 1) this.truncated[this.#lastKey] = { totalBytes: this.#decoded, omittedBytes: omitted };
    this.#tail = [];
    this.#tailLen = 0;
  }

  #emit(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#out.push(Buffer.from(bytes));
    this.#rawKept += bytes.length;
  }
}

/** Decoded UTF-8 bytes of escape-complete JSON string content. */
function decodedLength(raw: Buffer): number {
  let n = 0;
  for (let i = 0; i < raw.length;) {
    if (raw[i] !== BACKSLASH) {
      const next = raw.indexOf(BACKSLASH, i);
      const end = next < 0 ? raw.length : next;
      n += end - i;
      i = end;
      continue;
    }
    if (raw[i + 1] === 0x75) {
      n += utf8LengthOfUnit(Number.parseInt(raw.subarray(i + 2, i + 6).toString('latin1'), 16) || 0);
      i += 6;
    } else {
      n += 1;
      i += 2;
    }
  }
  return n;
}
