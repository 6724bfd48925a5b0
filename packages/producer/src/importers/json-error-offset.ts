/**
 * Offset of the first JSON syntax error in `text`, or undefined when it is valid. Only used after JSON.parse has
 * failed: V8 names a position for some errors but not for others ("Unexpected token ..."), and people need the line.
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
  const value = (): boolean => {
    ws();
    const c = text[i];
    if (c === '{') return container('}', true);
    if (c === '[') return container(']', false);
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    return number();
  };
  const container = (close: string, keyed: boolean): boolean => {
    i += 1;
    ws();
    if (text[i] === close) {
      i += 1;
      return true;
    }
    for (;;) {
      if (keyed) {
        ws();
        if (!string()) return false;
        ws();
        if (text[i] !== ':') return false;
        i += 1;
      }
      if (!value()) return false;
      ws();
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      if (text[i] === close) {
        i += 1;
        return true;
      }
      return false;
    }
  };
  if (!value()) return i;
  ws();
  return i < text.length ? i : undefined;
}
