/**
 * Python string semantics the SWE-bench parsers rely on. `str.split()` and `str.strip()` treat more
 * characters as whitespace than JS `\s` does (0x1c-0x1f, 0x85) and fewer (no U+FEFF); grading must
 * tokenise exactly like the harness or test names drift.
 */
export const PY_WHITESPACE_CLASS =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

const SPLIT_RE = new RegExp(`[${PY_WHITESPACE_CLASS}]+`);
const STRIP_RE = new RegExp(`^[${PY_WHITESPACE_CLASS}]+|[${PY_WHITESPACE_CLASS}]+$`, 'g');

/** Python `s.split()` (no separator): runs of whitespace, no empty tokens. */
export function pySplit(text: string): string[] {
  return text.split(SPLIT_RE).filter((token) => token !== '');
}

/** Python `s.strip()`. */
export function pyStrip(text: string): string {
  return text.replace(STRIP_RE, '');
}
