/**
 * Server-side check of a Volcengine V4 signature (used by vefaas-local).
 * Wire contract (vefaas-api.md §2, §5):
 *   in:  method, raw path, raw query, request headers (lower-case names, as node gives them), exact body bytes
 *   out: ok + accessKeyId + region from the credential scope, or one gateway error code:
 *        MissingAuthenticationToken (no Authorization), InvalidAuthorization (unparsable / wrong algorithm / bad scope),
 *        MissingSignature, InvalidAccessKey (unknown AK), InvalidTimestamp (X-Date missing, malformed or skewed),
 *        SignatureDoesNotMatch (signature, body hash or a signed header does not match)
 * Verification uses the SignedHeaders the client declared, because real clients sign different sets (§2.2).
 */
import { timingSafeEqual } from 'node:crypto';
import {
  SIGNING_ALGORITHM,
  buildCanonicalRequest,
  buildStringToSign,
  canonicalQuery,
  computeSignature,
  credentialScope,
  deriveSigningKey,
  parseQuery,
  parseXDate,
  sha256Hex,
} from './signing.js';

const MINUTE = 60 * 1000;

export type SignatureErrorCode =
  | 'MissingAuthenticationToken'
  | 'InvalidAccessKey'
  | 'SignatureDoesNotMatch'
  | 'InvalidTimestamp'
  | 'InvalidAuthorization'
  | 'MissingSignature';

export interface VerifySignatureInput {
  method: string;
  /** Raw request path without the query, e.g. `/`. */
  path: string;
  /** Raw query string without the leading `?`. */
  rawQuery: string;
  /** Lower-case header names, as node's IncomingMessage.headers gives them. */
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  /** Expected service in the credential scope, e.g. `vefaas`. */
  service: string;
}

export interface VerifySignatureOptions {
  lookupSecret: (accessKeyId: string) => string | undefined;
  /** Server time; defaults to now. */
  now?: Date;
  /**
   * Accepted |server time − X-Date|. The real window is not documented (vefaas-api.md §6.6).
   * @defaultValue 15 * MINUTE
   */
  maxSkewMs?: number;
}

export type VerifySignatureResult =
  { ok: true; accessKeyId: string; region: string } | { ok: false; code: SignatureErrorCode; message: string };

interface ParsedAuthorization {
  accessKeyId: string;
  shortDate: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string | undefined;
}

function fail(code: SignatureErrorCode, message: string): VerifySignatureResult {
  return { ok: false, code, message };
}

function headerValue(headers: VerifySignatureInput['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function parseAuthorization(value: string): ParsedAuthorization | string {
  const space = value.indexOf(' ');
  const algorithm = space === -1 ? value : value.slice(0, space);
  if (algorithm !== SIGNING_ALGORITHM) return `unsupported algorithm '${algorithm}'`;
  const fields = new Map<string, string>();
  for (const part of value.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq !== -1) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const credential = fields.get('Credential');
  const signedHeaders = fields.get('SignedHeaders');
  if (!credential) return 'Credential is missing';
  if (!signedHeaders) return 'SignedHeaders is missing';
  const scope = credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'request' || scope.some((p) => p === '')) {
    return 'Credential must be <AccessKeyId>/<YYYYMMDD>/<region>/<service>/request';
  }
  const [accessKeyId, shortDate, region, service] = scope as [string, string, string, string, string];
  return {
    accessKeyId,
    shortDate,
    region,
    service,
    signedHeaders: signedHeaders.split(';').map((h) => h.trim().toLowerCase()),
    signature: fields.get('Signature') || undefined,
  };
}

function equalHex(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export function verifySignature(input: VerifySignatureInput, opts: VerifySignatureOptions): VerifySignatureResult {
  const authorization = headerValue(input.headers, 'authorization');
  if (!authorization) return fail('MissingAuthenticationToken', 'the request has no Authorization header');

  const auth = parseAuthorization(authorization.trim());
  if (typeof auth === 'string') return fail('InvalidAuthorization', `malformed Authorization header: ${auth}`);
  if (auth.service !== input.service) {
    return fail(
      'InvalidAuthorization',
      `credential scope names service '${auth.service}', expected '${input.service}'`,
    );
  }
  if (auth.signature === undefined) return fail('MissingSignature', 'the Authorization header has no Signature');

  const secret = opts.lookupSecret(auth.accessKeyId);
  if (secret === undefined) return fail('InvalidAccessKey', 'the access key id is not known');

  const xDateRaw = headerValue(input.headers, 'x-date');
  const xDate = xDateRaw === undefined ? undefined : parseXDate(xDateRaw.trim());
  if (xDateRaw === undefined || xDate === undefined) {
    return fail('InvalidTimestamp', 'X-Date is missing or not in YYYYMMDDTHHMMSSZ form');
  }
  const maxSkewMs = opts.maxSkewMs ?? 15 * MINUTE;
  const skewMs = Math.abs((opts.now ?? new Date()).getTime() - xDate.getTime());
  if (skewMs > maxSkewMs)
    return fail('InvalidTimestamp', `X-Date is ${Math.round(skewMs / 1000)} s away from server time`);
  if (xDateRaw.trim().slice(0, 8) !== auth.shortDate) {
    return fail('InvalidAuthorization', 'the credential scope date does not match X-Date');
  }

  const bodySha256 = sha256Hex(input.body);
  const declaredBodySha = headerValue(input.headers, 'x-content-sha256');
  if (declaredBodySha !== undefined && declaredBodySha.trim() !== bodySha256) {
    return fail('SignatureDoesNotMatch', 'X-Content-Sha256 does not match the request body');
  }

  const headers = new Map<string, string>();
  for (const name of auth.signedHeaders) {
    const value = headerValue(input.headers, name);
    if (value === undefined) return fail('SignatureDoesNotMatch', `signed header '${name}' is not present`);
    headers.set(name, value);
  }
  const canonicalRequest = buildCanonicalRequest({
    method: input.method,
    path: input.path,
    query: canonicalQuery(parseQuery(input.rawQuery)),
    headers,
    // Canonical order is sorted, whatever order the client listed them in.
    signedHeaders: [...auth.signedHeaders].sort(),
    bodySha256,
  });
  const stringToSign = buildStringToSign(
    xDateRaw.trim(),
    credentialScope(auth.shortDate, auth.region, auth.service),
    canonicalRequest,
  );
  const expected = computeSignature(deriveSigningKey(secret, auth.shortDate, auth.region, auth.service), stringToSign);
  if (!equalHex(expected, auth.signature.toLowerCase())) {
    return fail('SignatureDoesNotMatch', 'the request signature does not match the calculated signature');
  }
  return { ok: true, accessKeyId: auth.accessKeyId, region: auth.region };
}
