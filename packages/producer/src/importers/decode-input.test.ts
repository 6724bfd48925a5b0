import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeInputFile, firstInvalidUtf8 } from './decode-input.js';

describe('decoding input files', () => {
  it('reads UTF-8 with or without a BOM, and UTF-16 with one', () => {
    const text = '{"instance_id": "café ✓ 😀"}\n';
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const utf16be = Buffer.from(utf16le.subarray(2)).swap16();
    for (const bytes of [
      Buffer.from(text),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]),
      utf16le,
      Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be]),
    ]) {
      expect(decodeInputFile('e.json', bytes)).toEqual({ ok: true, file: { path: 'e.json', text } });
    }
  });

  it('refuses bytes that are not UTF-8, naming the line and the byte', () => {
    const bytes = Buffer.concat([Buffer.from('{"a": 1}\n{"b": "'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]);
    expect(decodeInputFile('e.jsonl', bytes)).toEqual({
      ok: false,
      problem: {
        file: 'e.jsonl',
        line: 2,
        message: 'not UTF-8 text (byte 0xc3 at offset 16 is not valid UTF-8)',
        hint: expect.stringContaining('UTF-8'),
        code: 'INPUT_INVALID',
      },
    });
    // Encoded surrogates and overlong forms are not UTF-8 either (a lenient decoder would pass them on).
    expect(firstInvalidUtf8(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(firstInvalidUtf8(Buffer.from([0x41, 0xc0, 0xaf]))).toBe(1);
  });

  it('agrees with a strict TextDecoder on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), fc.string({ unit: 'binary', maxLength: 8 }), (raw, s) => {
        for (const bytes of [raw, new Uint8Array([...Buffer.from(s), ...raw])]) {
          let valid = true;
          try {
            new TextDecoder('utf-8', { fatal: true }).decode(bytes);
          } catch {
            valid = false;
          }
          expect(firstInvalidUtf8(bytes) === undefined).toBe(valid);
        }
      }),
      { numRuns: 5_000 },
    );
  });
});
