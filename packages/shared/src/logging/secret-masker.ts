/**
 * Masks an episode's secrets in what leaves its sandbox (docs/policy.md, "Secrets in observations"): every
 * occurrence of a secret's value — and of its common encodings — becomes SECRET_MASK, in the manner of GitHub
 * Actions' log masking.
 *
 * An episode's secrets are the values of its `sandbox.env` variables whose names say they are secret: the
 * logger's rule (`isSecretKey`: `*TOKEN`, `*SECRET`, `*PASSWORD`, `*API_KEY`, …) and, for variables, any name
 * ending in KEY (`SSH_KEY`, `OPENAI_KEY`: a log field named `key` is an id, an env variable so named is not). Other variables (`PYTHONPATH=/testbed`) are not masked: hunting every env value would shred ordinary
 * paths out of every observation. Values shorter than MIN_MASKED_LENGTH are not masked either (a 1-character
 * "secret" would mask every occurrence of that character); `episodeSecrets` names them so the worker can say so.
 *
 * Forms masked for each value: the value itself, its JSON-escaped forms (a `cat config.json`; also with
 * non-ASCII as \uXXXX, as Python writes it), each line of a
 * multi-line value, and its base64 at the three byte alignments (the characters that depend on the value alone,
 * so it is found inside longer base64 and with `echo`'s trailing newline encoded). Overlapping occurrences of
 * different secrets (one a prefix of another, two that share characters) are masked as one span, so no part of
 * either shows. The matcher is built once per episode; an episode without secrets gets no masker at all.
 */
import { MIN_SCRUBBED_LENGTH } from './redact-job-data.js';
import { isSecretKey } from './redact.js';

/** What a masked secret reads as. */
export const SECRET_MASK = '***';
/** Secrets shorter than this (UTF-16 code units) are not masked; the display redaction's limit, one rule for both. */
export const MIN_MASKED_LENGTH = MIN_SCRUBBED_LENGTH;

export interface SecretMasker {
  /** `text` with every occurrence of every form of every secret replaced by SECRET_MASK. */
  mask(text: string): string;
  /** `value` with `mask` applied to every string in it (object keys excepted); copy-on-write. */
  maskDeep<T>(value: T): T;
}

/** The secret values of an episode's sandbox env, and the names of secret-named variables too short to mask. */
export function episodeSecrets(env: Readonly<Record<string, string>>): { values: string[]; tooShort: string[] } {
  const values: string[] = [];
  const tooShort: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!isSecretVariable(name) || value === '') continue;
    if (value.length < MIN_MASKED_LENGTH) tooShort.push(name);
    else values.push(value);
  }
  return { values, tooShort };
}

/** Whether a sandbox variable's name says its value is secret (see the header). */
export function isSecretVariable(name: string): boolean {
  return isSecretKey(name) || /key$/i.test(name);
}

/** A masker for `secrets` (shorter ones ignored); undefined when there is nothing to mask, so callers skip all work. */
export function createSecretMasker(secrets: readonly string[]): SecretMasker | undefined {
  const forms = [...new Set(secrets.filter((s) => s.length >= MIN_MASKED_LENGTH).flatMap(formsOf))].filter(
    (f) => f.length >= MIN_MASKED_LENGTH,
  );
  if (forms.length === 0) return undefined;
  const mask = (text: string): string => maskText(text, forms);
  return { mask, maskDeep: (value) => maskDeep(value, mask, 0) };
}

function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  // Python's json.dumps escapes every non-ASCII character (ensure_ascii).
  const asciiJson = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const forms = [secret, json, asciiJson];
  // A multi-line value (a PEM key) is often printed a line at a time, or with \r\n line ends.
  if (/[\r\n]/.test(secret)) forms.push(...secret.split(/\r?\n|\r/));
  const bytes = Buffer.from(secret, 'utf8');
  for (const offset of [0, 1, 2] as const) forms.push(base64At(bytes, offset));
  return forms;
}

/**
 * The base64 characters of `bytes` preceded by `offset` other bytes: only those that depend on `bytes` alone
 * (6-bit groups wholly inside it), so the form matches wherever the value sits in a longer encoded stream.
 */
function base64At(bytes: Buffer, offset: 0 | 1 | 2): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  const start = [0, 2, 3][offset]!;
  const end = Math.floor(((offset + bytes.length) * 8) / 6);
  return encoded.slice(start, end);
}

function maskText(text: string, forms: readonly string[]): string {
  // Every occurrence of every form, overlaps included, as [start, end) spans; most texts have none.
  let spans: Array<[number, number]> | undefined;
  for (const form of forms) {
    for (let at = text.indexOf(form); at !== -1; at = text.indexOf(form, at + 1))
      (spans ??= []).push([at, at + form.length]);
  }
  if (spans === undefined) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = '';
  let copied = 0;
  let [start, end] = spans[0]!;
  for (const [s, e] of spans.slice(1)) {
    if (s <= end) end = Math.max(end, e);
    else {
      out += text.slice(copied, start) + SECRET_MASK;
      copied = end;
      [start, end] = [s, e];
    }
  }
  return out + text.slice(copied, start) + SECRET_MASK + text.slice(end);
}

const MAX_DEPTH = 200;

function maskDeep<T>(value: T, mask: (text: string) => string, depth: number): T {
  if (typeof value === 'string') return mask(value) as T;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item: unknown) => {
      const next = maskDeep(item, mask, depth + 1);
      changed ||= next !== item;
      return next;
    });
    return (changed ? out : value) as T;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = maskDeep(item, mask, depth + 1);
    if (next !== item) {
      out ??= { ...(value as Record<string, unknown>) };
      out[key] = next;
    }
  }
  return (out ?? value) as T;
}
