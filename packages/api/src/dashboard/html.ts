/** Tagged template for server-rendered pages: every interpolated value is HTML-escaped unless it is `raw`. */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export class RawHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

type Interpolated = string | number | boolean | null | undefined | RawHtml | readonly RawHtml[];

export function html(strings: TemplateStringsArray, ...values: Interpolated[]): RawHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new RawHtml(out);
}

function render(value: Interpolated): string {
  if (value === null || value === undefined) return '';
  if (value instanceof RawHtml) return value.value;
  if (Array.isArray(value)) return value.map((v: RawHtml) => v.value).join('');
  return escapeHtml(String(value));
}
