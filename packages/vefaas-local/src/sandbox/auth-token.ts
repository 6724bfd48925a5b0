/**
 * Finds the SWE-ReX auth token in a sandbox start command (InstanceImageInfo.Command).
 *
 * Rules, first match wins:
 * 1. `--auth-token X` or `--auth-token=X` anywhere (X may be quoted): `python3 -m swerex.server --auth-token X`,
 *    `swerex-remote --auth-token X || (... pipx run swe-rex --auth-token X)`.
 * 2. An install-script launcher as its last command: the trailing argument handed to the script by
 *    `... | bash -s -- X`, `... | sh -s X`, `bash install.sh X`, `exec bash /tmp/install.sh X` (seed.md passes the
 *    token as the script's one argument); `bash -c '<cmd>'` is searched recursively.
 * Otherwise '' (the server then runs with auth disabled).
 */

const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh']);
const PREFIX_WORDS = new Set(['exec', 'sudo', 'env', 'nohup', 'command']);

export function parseAuthToken(command: string): string {
  const flag = /--auth-token(?:=|\s+)(?:'([^']*)'|"([^"]*)"|([^\s;&|)]+))/.exec(command);
  if (flag) return flag[1] ?? flag[2] ?? flag[3] ?? '';
  return scriptArgument(command) ?? '';
}

function scriptArgument(command: string): string | undefined {
  const segments = splitTopLevel(command);
  const last = segments[segments.length - 1];
  if (last === undefined) return undefined;
  const words = shellWords(last);
  while (words.length > 0 && (PREFIX_WORDS.has(words[0] ?? '') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? '')))
    words.shift();
  const program = words.shift();
  if (program === undefined || !SHELLS.has(program.split('/').pop() ?? '')) return undefined;
  let readsStdin = false;
  while (words.length > 0 && (words[0] ?? '').startsWith('-') && words[0] !== '--') {
    const option = words.shift() ?? '';
    if (option === '-c') {
      const script = words.shift() ?? '';
      const inner = parseAuthToken(script);
      if (inner !== '') return inner;
      // `bash -c SCRIPT arg0 arg1...`: the script's first positional argument is arg1.
      return words.length >= 2 ? words[words.length - 1] : undefined;
    }
    if (option.includes('s')) readsStdin = true;
  }
  if (words[0] === '--') words.shift();
  if (!readsStdin) words.shift(); // the script path
  return words.length > 0 ? words[words.length - 1] : undefined;
}

/** Splits on unquoted `|`, `||`, `&&`, `;` and newlines; quotes and `$(...)` are kept intact. */
function splitTopLevel(command: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  let depth = 0;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] ?? '';
    if (quote !== null) {
      current += c;
      if (c === '\\' && quote === '"') current += command[++i] ?? '';
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0 && (c === '|' || c === ';' || c === '\n' || (c === '&' && command[i + 1] === '&'))) {
      if (c === '&' || (c === '|' && command[i + 1] === '|')) i++;
      out.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  out.push(current.trim());
  return out.filter((s) => s !== '');
}

/** Minimal POSIX word splitting: single/double quotes and backslash escapes. */
function shellWords(text: string): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      current += text.slice(i + 1, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
      inWord = true;
    } else if (c === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        current += text[i] ?? '';
        i++;
      }
      inWord = true;
    } else if (c === '\\') {
      current += text[++i] ?? '';
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}
