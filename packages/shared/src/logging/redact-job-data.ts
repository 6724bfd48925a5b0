/**
 * Job data for display — Bull Board, the HTTP API, anything a person or another program reads — with secrets
 * replaced by `[REDACTED]`. The one function both use (TEAM contract "redaction"):
 * - every value of an environment map (`env`, `envs`, `Envs` at any depth: the sandbox's `sandbox.env`, a
 *   session's environment) — its keys stay, so people still see which variables were set;
 * - every field whose name says it is secret (`isSecretKey`: api_key, authorization, token, password, ...);
 * - SWE-ReX auth tokens in start commands (`--auth-token X`);
 * - and, in all other text of the job, any occurrence of those secret values (a command that exported the
 *   token, an error message that quoted it). Values shorter than MIN_SCRUBBED_LENGTH are redacted in their
 *   own field but not hunted through free text, where "1" or "true" would shred everything.
 * Copy-on-write: the input is never mutated.
 */
import { REDACTED, isSecretKey, redactSecrets } from './redact.js';

const ENV_KEYS = new Set(['env', 'envs', 'environment']);
const AUTH_TOKEN_FLAG = /(--auth-token(?:=|\s+))(?:'[^']*'|"[^"]*"|\S+)/g;
/** Shorter secret values are not searched for in free text. */
export const MIN_SCRUBBED_LENGTH = 6;
/** Deeper than any valid episode (the producer's nesting limit is 128): cut rather than walk. */
const MAX_DEPTH = 200;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function isEnvKey(key: string): boolean {
  return ENV_KEYS.has(key.toLowerCase());
}

/** The secret values held in `data` (env values, secret-named fields, auth tokens): what free text must not show. */
export function jobSecrets(data: unknown): string[] {
  const found = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string' && value !== '') found.add(value);
    else if (typeof value === 'number' || typeof value === 'boolean') found.add(String(value));
  };
  const stack: Array<{ value: unknown; depth: number }> = [{ value: data, depth: 0 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, depth } = next;
    if (depth > MAX_DEPTH) continue;
    if (typeof value === 'string') {
      for (const match of value.matchAll(AUTH_TOKEN_FLAG))
        add(match[0].slice(match[1]!.length).replace(/^['"]|['"]$/g, ''));
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
    } else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (isSecretKey(key)) add(item);
        else if (isEnvKey(key) && isPlainObject(item)) for (const envValue of Object.values(item)) add(envValue);
        else stack.push({ value: item, depth: depth + 1 });
      }
    }
  }
  return [...found];
}

/** Free text (a job log line, a failure message) with the job's secret values cut out. */
export function redactJobText(text: string, secrets: readonly string[]): string {
  const scrubbed = redactSecrets(
    text,
    secrets.filter((s) => s.length >= MIN_SCRUBBED_LENGTH),
  );
  return scrubbed.replace(AUTH_TOKEN_FLAG, `$1${REDACTED}`);
}

function redactValue(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (typeof value === 'string') return redactJobText(value, secrets);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item: unknown) => {
      const next = redactValue(item, secrets, depth + 1);
      changed ||= next !== item;
      return next;
    });
    return changed ? out : value;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    let next: unknown;
    if (isSecretKey(key) && item !== undefined && item !== null) next = REDACTED;
    else if (isEnvKey(key) && isPlainObject(item))
      next = Object.fromEntries(Object.keys(item).map((name) => [name, REDACTED]));
    else next = redactValue(item, secrets, depth + 1);
    if (next !== item) {
      out ??= { ...value };
      out[key] = next;
    }
  }
  return out ?? value;
}

/**
 * `data` as it may be shown: env values, secret fields and auth tokens replaced, and those values cut out of
 * every other string. Pass `context` (e.g. the job's data) to also scrub what it holds from `data` — a job's
 * return value or log lines do not carry the env themselves.
 */
export function redactJobData<T>(data: T, context: unknown = data): T {
  const secrets = context === data ? jobSecrets(data) : [...new Set([...jobSecrets(data), ...jobSecrets(context)])];
  return redactValue(data, secrets, 0) as T;
}
