/**
 * How a result is stored in its Redis key: its JSON, brotli-compressed behind a one-byte tag when it is larger
 * than a small threshold (whole eval logs and step outputs compress 5–20×; docs/capacity.md). A stored value
 * starting with `{` is plain JSON (small results, and every result written before compression), so old values
 * stay readable. Readers must fetch the value as bytes (`getBuffer`, `mgetBuffer`, LuaScript.runBuffer).
 */
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';

/** Tag byte of a brotli-compressed result; plain JSON starts with `{` (0x7b). */
const BROTLI_TAG = 0x01;
/** Results smaller than this are stored as plain JSON: compressing them saves next to nothing. */
export const COMPRESS_ABOVE_BYTES = 1024;
/** Quality 5: most of quality 11's ratio on logs at a small fraction of its time (tens of ms per MiB). */
const QUALITY = 5;

export function encodeResultValue(json: string): string | Buffer {
  if (Buffer.byteLength(json, 'utf8') <= COMPRESS_ABOVE_BYTES) return json;
  const packed = brotliCompressSync(Buffer.from(json, 'utf8'), {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [constants.BROTLI_PARAM_SIZE_HINT]: json.length,
    },
  });
  return Buffer.concat([Buffer.of(BROTLI_TAG), packed]);
}

/** The JSON text of a stored value (as bytes, or as a string when it was read as one: plain JSON only). */
export function decodeResultValue(raw: Buffer | string): string {
  if (typeof raw === 'string') return raw;
  if (raw[0] === BROTLI_TAG) return brotliDecompressSync(raw.subarray(1)).toString('utf8');
  return raw.toString('utf8');
}

/** A stored value → the parsed JSON (not yet schema-checked). */
export function parseResultValue(raw: Buffer | string): unknown {
  return JSON.parse(decodeResultValue(raw)) as unknown;
}
