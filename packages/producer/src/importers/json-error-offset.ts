/**
 * Offset of the first JSON syntax error in `text`, or undefined when it is valid. Only used after JSON.parse has
 * failed: V8 names a position for some errors but not for others ("Unexpected token ..."), and people need the line.
 *
 * Iterative on purpose (an explicit stack of open containers): a file of 100 000 `[` must give a located problem,
 * not "Maximum call stack size exceeded".
 */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1;
  };
  const literal = (word: string): boolean => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return true;
    }
    return false;
  };
  const string = (): boolean => {
    if (text[i] !== '"') return false;
    i += 1;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i += 1;
        return true;
      }
      if (c < ' ') return false;
      if (c === '\\') {
        const next = text[i + 1] ?? '';
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false;
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(next) || next === '') return false;
        i += 2;
        continue;
      }
      i += 1;
    }
    return false;
  };
  const number = (): boolean => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (match === null) return false;
    i += match[0].length;
    return true;
  };
  /** Closing characters of the open containers, innermost last. */
  const open: string[] = [];
  /** Reads a key and its colon when the innermost open container is an object. */
  const key = (): boolean => {
    if (open[open.length - 1] !== '}') return true;
    ws();
    if (!string()) return false;
    ws();
    if (text[i] !== ':') return false;
    i += 1;
    return true;
  };
  /** Reads one value; an opening bracket only opens its container (its members are read by the loop). */
  const value = (): boolean => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      i += 1;
      ws();
      const close = c === '{' ? '}' : ']';
      if (text[i] === close) {
        i += 1;
        return true;
      }
      open.push(close);
      return key();
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    return number();
  };
  if (!value()) return i;
  while (open.length > 0) {
    // The value just read was either a scalar or a container opened and already closed, or a container opened
    // whose first member is next: only a member that finished brings us to a separator.
    const depth = open.length;
    if (!value()) return i;
    if (open.length > depth) continue;
    // Close every container that ends here, then expect a separator.
    for (;;) {
      ws();
      const close = open[open.length - 1];
      if (text[i] === close) {
        i += 1;
        open.pop();
        if (open.length === 0) break;
        continue;
      }
      if (text[i] === ',') {
        i += 1;
        if (!key()) return i;
        break;
      }
      return i;
    }
  }
  ws();
  return i < text.length ? i : undefined;
}
