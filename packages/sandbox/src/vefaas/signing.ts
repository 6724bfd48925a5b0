/**
 * Volcengine V4 request signing (HMAC-SHA256), as used by the veFaaS control plane.
 * Wire contract (vefaas-api.md §2):
 *   in:  method, URL (path + query), headers, exact body bytes, region, service, credentials, time
 *   out: headers X-Date (YYYYMMDD'T'HHMMSS'Z'), X-Content-Sha256 (hex sha256 of the body), Host,
 *        X-Security-Token (STS only) and
 *        `Authorization: HMAC-SHA256 Credential=<AK>/<date>/<region>/<service>/request, SignedHeaders=<a;b>, Signature=<hex>`
 * The primitives below are shared with verify-signature.ts so that signer and verifier cannot drift apart.
 */
import { createHash, createHmac } from 'node:crypto';

export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** STS session token; sent as X-Security-Token. */
  sessionToken?: string;
}

export const SIGNING_ALGORITHM = 'HMAC-SHA256';

/**
 * Headers never signed even when present, matching the official signers: they are rewritten by proxies or
 * transports (content-length, user-agent, expect) or are the signature itself.
 */
const UNSIGNABLE_HEADERS = new Set([
  'authorization',
  'content-length',
  'user-agent',
  'expect',
  'presigned-expires',
  'connection',
]);

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Uint8Array, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** `20250102T030405Z` for 2025-01-02 03:04:05 UTC. */
export function formatXDate(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** Parses an X-Date value; undefined when malformed. */
export function parseXDate(value: string): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  return formatXDate(date) === value ? date : undefined;
}

/** RFC 3986 encoding: only `A-Z a-z 0-9 - _ . ~` stay literal; space becomes %20. */
export function rfc3986Encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * Splits a raw query string into decoded pairs. `+` is kept literal (not a space): signers encode spaces as %20,
 * and signer and verifier both parse with this function so they agree on every input.
 */
export function parseQuery(rawQuery: string): Array<[string, string]> {
  const raw = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery;
  if (raw === '') return [];
  return raw
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const eq = part.indexOf('=');
      const key = eq === -1 ? part : part.slice(0, eq);
      const value = eq === -1 ? '' : part.slice(eq + 1);
      return [safeDecode(key), safeDecode(value)];
    });
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function canonicalQuery(pairs: ReadonlyArray<readonly [string, string]>): string {
  return pairs
    .map(([k, v]) => [rfc3986Encode(k), rfc3986Encode(v)] as const)
    .sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

export interface CanonicalRequestInput {
  method: string;
  /** Already-encoded request path; empty means `/`. */
  path: string;
  /** Output of canonicalQuery(). */
  query: string;
  /** Lower-case header name → value, for (at least) every signed header. */
  headers: ReadonlyMap<string, string>;
  /** Lower-case names, sorted. */
  signedHeaders: readonly string[];
  bodySha256: string;
}

/** Every header line, including the last, ends in `\n` — hence the blank line before SignedHeaders. */
export function buildCanonicalRequest(input: CanonicalRequestInput): string {
  const headerLines = input.signedHeaders.map((name) => `${name}:${(input.headers.get(name) ?? '').trim()}\n`).join('');
  return [
    input.method.toUpperCase(),
    input.path === '' ? '/' : input.path,
    input.query,
    headerLines,
    input.signedHeaders.join(';'),
    input.bodySha256,
  ].join('\n');
}

export function credentialScope(shortDate: string, region: string, service: string): string {
  return `${shortDate}/${region}/${service}/request`;
}

export function buildStringToSign(xDate: string, scope: string, canonicalRequest: string): string {
  return [SIGNING_ALGORITHM, xDate, scope, sha256Hex(canonicalRequest)].join('\n');
}

/**
 * The last key derived, reused while secret, date, region and service stay the same (the official SDKs cache
 * it too): four HMACs per control-plane call otherwise, for a key that changes once a day.
 */
let lastKey: { secret: string; shortDate: string; region: string; service: string; key: Buffer } | undefined;

export function deriveSigningKey(secretAccessKey: string, shortDate: string, region: string, service: string): Buffer {
  const last = lastKey;
  if (
    last !== undefined &&
    last.secret === secretAccessKey &&
    last.shortDate === shortDate &&
    last.region === region &&
    last.service === service
  ) {
    return last.key;
  }
  const kDate = hmac(Buffer.from(secretAccessKey, 'utf8'), shortDate);
  const kRegion = hmac(kDate, region);
  const kService = hmac(kRegion, service);
  const key = hmac(kService, 'request');
  lastKey = { secret: secretAccessKey, shortDate, region, service, key };
  return key;
}

export function computeSignature(signingKey: Uint8Array, stringToSign: string): string {
  return createHmac('sha256', signingKey).update(stringToSign, 'utf8').digest('hex');
}

export interface SignRequestInput {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** The exact bytes that will be sent: serialise once, sign and send the same value. */
  body: string | Uint8Array;
  region: string;
  service: string;
  /** Signing time; defaults to now. */
  date?: Date;
  /**
   * Lower-case header names to sign instead of the default set (every header given plus host, x-date,
   * x-content-sha256 and x-security-token). Lets callers reproduce other clients' header sets.
   */
  signedHeaders?: readonly string[];
}

/** Every intermediate value, for tests and diagnostics. */
export interface SignatureParts {
  canonicalRequest: string;
  stringToSign: string;
  signingKey: Buffer;
  signature: string;
  signedHeaders: string[];
  authorization: string;
  /** The complete headers to send (input headers + Host, X-Date, X-Content-Sha256, X-Security-Token?, Authorization). */
  headers: Record<string, string>;
}

export function signRequestParts(input: SignRequestInput, creds: Credentials): SignatureParts {
  const xDate = formatXDate(input.date ?? new Date());
  const shortDate = xDate.slice(0, 8);
  const bodySha256 = sha256Hex(input.body);

  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers)) {
    // The computed values below win over caller-supplied ones with different casing.
    if (!['host', 'x-date', 'x-content-sha256', 'x-security-token', 'authorization'].includes(name.toLowerCase()))
      out[name] = value;
  }
  out['Host'] = input.url.host;
  out['X-Date'] = xDate;
  out['X-Content-Sha256'] = bodySha256;
  if (creds.sessionToken !== undefined) out['X-Security-Token'] = creds.sessionToken;

  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(out)) lower.set(name.toLowerCase(), value);

  const signedHeaders = [...(input.signedHeaders ?? [...lower.keys()].filter((n) => !UNSIGNABLE_HEADERS.has(n)))]
    .map((n) => n.toLowerCase())
    .sort();
  const canonicalRequest = buildCanonicalRequest({
    method: input.method,
    path: input.url.pathname,
    query: canonicalQuery(parseQuery(input.url.search)),
    headers: lower,
    signedHeaders,
    bodySha256,
  });
  const scope = credentialScope(shortDate, input.region, input.service);
  const stringToSign = buildStringToSign(xDate, scope, canonicalRequest);
  const signingKey = deriveSigningKey(creds.secretAccessKey, shortDate, input.region, input.service);
  const signature = computeSignature(signingKey, stringToSign);
  const authorization = `${SIGNING_ALGORITHM} Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders.join(';')}, Signature=${signature}`;
  out['Authorization'] = authorization;
  return { canonicalRequest, stringToSign, signingKey, signature, signedHeaders, authorization, headers: out };
}

/** Signs a request and returns the complete headers to send (Host, X-Date, X-Content-Sha256, X-Security-Token?, Authorization). */
export function signRequest(input: SignRequestInput, creds: Credentials): Record<string, string> {
  return signRequestParts(input, creds).headers;
}
