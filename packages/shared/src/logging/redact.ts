/**
 * Secret scrubbing for log records. Two layers, because neither alone is enough:
 * - by key: any field whose name says "secret" (authorization, x-api-key, *token, *password,
 *   *secretAccessKey, *gatewayKey, ...) at any depth, any letter case, is censored;
 * - by value: known secret strings (a SWE-ReX token inside a start command, say) are cut out of
 *   free text with `redactSecrets`.
 */
export const REDACTED = '[REDACTED]';

/** Paths handed to pino's own `redact` as well (fast, explicit; the key walk below covers any depth). */
export const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.accessKeyId',
  '*.secretAccessKey',
  '*.gatewayKey',
  '*.authToken',
  '*.token',
  '*.password',
  'accessKeyId',
  'secretAccessKey',
  'gatewayKey',
  'authToken',
  'token',
  'password',
];

// Compared after lower-casing and dropping '-' and '_', so `X-API-Key`, `VEFAAS_SECRET_KEY` and `secretAccessKey` all match.
const SECRET_SUFFIXES = [
  'authorization',
  'cookie',
  'apikey',
  'password',
  'passwd',
  'secret',
  'secretkey',
  'secretaccesskey',
  'accesskey',
  'accesskeyid',
  'token',
  'gatewaykey',
];
const SECRET_NAMES = new Set(['ak', 'sk']);

export function isSecretKey(key: string): boolean {
  const normal = key.toLowerCase().replace(/[-_]/g, '');
  return SECRET_NAMES.has(normal) || SECRET_SUFFIXES.some((suffix) => normal.endsWith(suffix));
}

const MAX_DEPTH = 10;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Returns `value` with secret-named fields censored at any depth. Copy-on-write: the caller's
 * objects are never mutated, and unchanged subtrees are returned as they are.
 */
export function redactDeep<T>(value: T, depth = 0): T {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((item: unknown) => {
      const next = redactDeep(item, depth + 1);
      changed ||= next !== item;
      return next;
    });
    return (changed ? out : value) as T;
  }
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next = isSecretKey(key) && item !== undefined && item !== null ? REDACTED : redactDeep(item, depth + 1);
    if (next !== item) {
      out ??= { ...value };
      out[key] = next;
    }
  }
  return (out ?? value) as T;
}

/**
 * Replaces every occurrence of each known secret in `text` with `[REDACTED]`, in both its raw and
 * JSON-escaped forms (log lines are JSON). Empty and missing secrets are skipped.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined | null)[]): string {
  let out = text;
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === undefined || secret === null || secret === '') continue;
    forms.add(secret);
    forms.add(JSON.stringify(secret).slice(1, -1));
  }
  // Longest first, so a secret that contains another is removed whole.
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(REDACTED);
  return out;
}
