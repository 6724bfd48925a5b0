/**
 * Python `shlex.quote`, byte for byte: SWE-agent builds tool command lines with it, and recorded
 * trajectories store those command lines, so our quoting has to produce the same text.
 */
const SHLEX_SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Quote one word for a POSIX shell: `''` for empty, unchanged when only safe characters, else single quotes. */
export function shellQuote(value: string): string {
  if (value === '') return "''";
  if (SHLEX_SAFE.test(value)) return value;
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}
