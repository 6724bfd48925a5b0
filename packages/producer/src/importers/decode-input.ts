import { problemAt, type Problem } from '../validation/problem.js';
import type { InputFile } from './types.js';

export type DecodedInput = { ok: true; file: InputFile } | { ok: false; problem: Problem };

/**
 * Bytes of an input file → its text. UTF-8 (with or without a byte-order mark) is the format of every file we
 * read; UTF-16 with a byte-order mark (what some Windows editors save) is decoded too. Anything else is refused
 * with the line of the first byte that is not UTF-8, instead of being read with replacement characters that would
 * silently change commands and patches.
 */
export function decodeInputFile(path: string, bytes: Uint8Array): DecodedInput {
  if (bytes[0] === 0xff && bytes[1] === 0xfe)
    return { ok: true, file: { path, text: new TextDecoder('utf-16le').decode(bytes.subarray(2)) } };
  if (bytes[0] === 0xfe && bytes[1] === 0xff)
    return { ok: true, file: { path, text: new TextDecoder('utf-16be').decode(bytes.subarray(2)) } };
  const invalid = firstInvalidUtf8(bytes);
  if (invalid === undefined)
    return { ok: true, file: { path, text: new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes) } };
  let line = 1;
  for (let i = 0; i < invalid; i += 1) if (bytes[i] === 0x0a) line += 1;
  const byte = bytes[invalid]!.toString(16).padStart(2, '0');
  return {
    ok: false,
    problem: problemAt(
      { file: path, line },
      {
        message: `not UTF-8 text (byte 0x${byte} at offset ${invalid} is not valid UTF-8)`,
        hint: 'save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`); binary files cannot be read',
      },
    ),
  };
}

/** Offset of the first byte that breaks UTF-8 (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF). */
export function firstInvalidUtf8(bytes: Uint8Array): number | undefined {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let length: number;
    let max = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) length = 3;
    else if (b >= 0xf0 && b <= 0xf4) length = 4;
    else return i;
    // The second byte's range rules out overlong forms, UTF-16 surrogates and code points past U+10FFFF.
    const min = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    if (b === 0xed) max = 0x9f;
    if (b === 0xf4) max = 0x8f;
    for (let k = 1; k < length; k += 1) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? min : 0x80) || c > (k === 1 ? max : 0xbf)) return i;
    }
    i += length;
  }
  return undefined;
}
