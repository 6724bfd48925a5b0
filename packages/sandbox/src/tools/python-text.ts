/**
 * The few Python string conversions SWE-agent's command rendering relies on (`str()`, `repr()`, `str.strip()`),
 * reproduced so a command line built here equals the one the reference agent would have built.
 */

// Characters Python's str.strip() removes (str.isspace): differs from JS trim() (\x1c-\x1f, \x85 yes; \ufeff no).
const PY_WHITESPACE =
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_WHITESPACE.includes(text.charAt(start))) start += 1;
  while (end > start && PY_WHITESPACE.includes(text.charAt(end - 1))) end -= 1;
  return text.slice(start, end);
}

// str.isprintable() is false for these categories (the plain space excepted).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function escapeCodePoint(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };
  const simple = named[char];
  if (simple !== undefined) return simple;
  if (char === ' ' || !NON_PRINTABLE.test(char)) return char;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}

function pyStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = '';
  for (const char of text) {
    body += char === quote ? `\\${quote}` : escapeCodePoint(char);
  }
  return `${quote}${body}${quote}`;
}

function pyNumber(value: number): string {
  if (Number.isInteger(value)) return Math.abs(value) < 1e21 ? String(value) : BigInt(value).toString();
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  // JS and Python both print the shortest round-tripping form; only the exponent spelling differs.
  return String(value).replace(/e([+-])(\d)$/, 'e$10$2');
}

/** Python `repr()` of a JSON value. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return pyStringRepr(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pyNumber(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([key, item]) => `${pyStringRepr(key)}: ${pyRepr(item)}`).join(', ')}}`;
  }
  return String(value);
}

/** Python `str()` of a JSON value (what a Jinja `{{value}}` prints). */
export function pyStr(value: unknown): string {
  return typeof value === 'string' ? value : pyRepr(value);
}
