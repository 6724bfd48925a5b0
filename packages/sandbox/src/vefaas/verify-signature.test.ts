import { describe, expect, it } from 'vitest';
import { signRequest } from './signing.js';
import { verifySignature, type VerifySignatureInput } from './verify-signature.js';

const MINUTE = 60 * 1000;
const creds = { accessKeyId: 'AKLTtestAccessKey', secretAccessKey: 'testSecretKey' };
const lookupSecret = (ak: string) => (ak === creds.accessKeyId ? creds.secretAccessKey : undefined);
const signedAt = new Date('2025-01-02T03:04:05Z');
const BODY =
  '{"FunctionId": "fn-test", "Timeout": 60, "InstanceImageInfo": {"Image": "img:1", "Port": 8000, "Command": "python3 -m swerex.server --auth-token t"}}';

/** Signs like a client, then presents the request the way node's http server would. */
function incoming(
  options: { signedHeaders?: string[]; body?: string; sessionToken?: string } = {},
): VerifySignatureInput {
  const url = new URL('https://open.volcengineapi.com/?Action=CreateSandbox&Version=2024-06-06');
  const body = options.body ?? BODY;
  const headers = signRequest(
    {
      method: 'POST',
      url,
      headers: { 'Content-Type': 'application/json' },
      body,
      region: 'cn-beijing',
      service: 'vefaas',
      date: signedAt,
      ...(options.signedHeaders ? { signedHeaders: options.signedHeaders } : {}),
    },
    options.sessionToken === undefined ? creds : { ...creds, sessionToken: options.sessionToken },
  );
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method: 'POST',
    path: '/',
    rawQuery: url.search.slice(1),
    headers: lower,
    body: Buffer.from(body),
    service: 'vefaas',
  };
}

const opts = { lookupSecret, now: signedAt };

describe('verifySignature', () => {
  it('accepts each header set of vector B (B1, B2, B3) and an STS request', () => {
    for (const signedHeaders of [undefined, ['host', 'x-content-sha256', 'x-date'], ['x-content-sha256', 'x-date']]) {
      expect(verifySignature(incoming(signedHeaders ? { signedHeaders } : {}), opts)).toEqual({
        ok: true,
        accessKeyId: 'AKLTtestAccessKey',
        region: 'cn-beijing',
      });
    }
    expect(verifySignature(incoming({ sessionToken: 'sts' }), opts).ok).toBe(true);
  });

  it('accepts the published vector B1 Authorization header verbatim', () => {
    const req: VerifySignatureInput = {
      method: 'POST',
      path: '/',
      rawQuery: 'Action=CreateSandbox&Version=2024-06-06',
      headers: {
        'content-type': 'application/json',
        host: 'open.volcengineapi.com',
        'x-date': '20250102T030405Z',
        'x-content-sha256': 'b1d9bcf911869f24609016c70a0ae831cf74715b8b72e315b238925f61e42806',
        authorization:
          'HMAC-SHA256 Credential=AKLTtestAccessKey/20250102/cn-beijing/vefaas/request, SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=52390ae5e81904306f8a9fc10c2cca64d09916cd8ebbb8dda91575581fd1a7a3',
      },
      body: Buffer.from(BODY),
      service: 'vefaas',
    };
    expect(verifySignature(req, opts).ok).toBe(true);
  });

  it('rejects a tampered body', () => {
    const req = incoming();
    req.body = Buffer.from(BODY.replace('fn-test', 'fn-evil'));
    expect(verifySignature(req, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    // Also when the attacker recomputes X-Content-Sha256: the signature covers it.
    const forged = incoming({ body: BODY.replace('fn-test', 'fn-evil') });
    const original = incoming();
    forged.headers['authorization'] = original.headers['authorization'];
    expect(verifySignature(forged, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
  });

  it('rejects a tampered signed header but ignores unsigned ones', () => {
    const tampered = incoming();
    tampered.headers['content-type'] = 'text/plain';
    expect(verifySignature(tampered, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });

    const unsignedChange = incoming({ signedHeaders: ['x-content-sha256', 'x-date'] });
    unsignedChange.headers['content-type'] = 'text/plain';
    unsignedChange.headers['user-agent'] = 'curl';
    expect(verifySignature(unsignedChange, opts).ok).toBe(true);

    const missing = incoming();
    delete missing.headers['host'];
    expect(verifySignature(missing, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
  });

  it('verifies requests whose signed headers leave content-type out as strictly as any other', () => {
    const signedHeaders = ['host', 'x-content-sha256', 'x-date'];
    expect(verifySignature(incoming({ signedHeaders }), opts).ok).toBe(true);
    // A wrong signature, a changed signed header, a changed query and a changed body are all still caught.
    const forged = incoming({ signedHeaders });
    forged.headers['authorization'] = String(forged.headers['authorization']).replace(
      /Signature=([0-9a-f])/,
      (_m, c: string) => `Signature=${c === '0' ? '1' : '0'}`,
    );
    expect(verifySignature(forged, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    const host = incoming({ signedHeaders });
    host.headers['host'] = 'evil.example.com';
    expect(verifySignature(host, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    const query = incoming({ signedHeaders });
    query.rawQuery = 'Action=KillSandbox&Version=2024-06-06';
    expect(verifySignature(query, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    const body = incoming({ signedHeaders });
    body.body = Buffer.from(BODY.replace('fn-test', 'fn-evil'));
    expect(verifySignature(body, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(
      verifySignature(incoming({ signedHeaders }), { lookupSecret: () => 'another-secret', now: signedAt }),
    ).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
  });

  it('rejects a changed query', () => {
    const req = incoming();
    req.rawQuery = 'Action=KillSandbox&Version=2024-06-06';
    expect(verifySignature(req, opts)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
  });

  it('rejects an unknown access key and a wrong secret', () => {
    expect(verifySignature(incoming(), { ...opts, lookupSecret: () => undefined })).toMatchObject({
      ok: false,
      code: 'InvalidAccessKey',
    });
    expect(verifySignature(incoming(), { ...opts, lookupSecret: () => 'otherSecret' })).toMatchObject({
      ok: false,
      code: 'SignatureDoesNotMatch',
    });
  });

  it('enforces the clock-skew window in both directions', () => {
    expect(verifySignature(incoming(), { ...opts, now: new Date(signedAt.getTime() + 14 * MINUTE) }).ok).toBe(true);
    expect(verifySignature(incoming(), { ...opts, now: new Date(signedAt.getTime() + 16 * MINUTE) })).toMatchObject({
      ok: false,
      code: 'InvalidTimestamp',
    });
    expect(
      verifySignature(incoming(), { ...opts, now: new Date(signedAt.getTime() - 2 * MINUTE), maxSkewMs: MINUTE }),
    ).toMatchObject({
      ok: false,
      code: 'InvalidTimestamp',
    });
    const noDate = incoming();
    delete noDate.headers['x-date'];
    expect(verifySignature(noDate, opts)).toMatchObject({ ok: false, code: 'InvalidTimestamp' });
  });

  it('classifies missing and malformed Authorization headers', () => {
    const req = incoming();
    const auth = String(req.headers['authorization']);
    const withAuth = (value: string | undefined) => ({ ...req, headers: { ...req.headers, authorization: value } });

    expect(verifySignature(withAuth(undefined), opts)).toMatchObject({ ok: false, code: 'MissingAuthenticationToken' });
    expect(verifySignature(withAuth(auth.replace('HMAC-SHA256', 'AWS4-HMAC-SHA256')), opts)).toMatchObject({
      ok: false,
      code: 'InvalidAuthorization',
    });
    expect(verifySignature(withAuth(auth.replace(/, Signature=[0-9a-f]+/, '')), opts)).toMatchObject({
      ok: false,
      code: 'MissingSignature',
    });
    expect(verifySignature(withAuth(auth.replace('/vefaas/', '/iam/')), opts)).toMatchObject({
      ok: false,
      code: 'InvalidAuthorization',
    });
    expect(verifySignature(withAuth(auth.replace('/request,', ',')), opts)).toMatchObject({
      ok: false,
      code: 'InvalidAuthorization',
    });
    expect(verifySignature(withAuth(auth.replace('/20250102/', '/20250101/')), opts)).toMatchObject({
      ok: false,
      code: 'InvalidAuthorization',
    });
  });
});
