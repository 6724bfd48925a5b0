import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import {
  canonicalQuery,
  deriveSigningKey,
  formatXDate,
  parseQuery,
  parseXDate,
  rfc3986Encode,
  sha256Hex,
  signRequest,
  signRequestParts,
} from './signing.js';

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('vector A (published, IAM ListUsers GET)', () => {
  const parts = signRequestParts(
    {
      method: 'GET',
      url: new URL('https://iam.volcengineapi.com/?Action=ListUsers&Version=2018-01-01&Limit=10&Offset=0'),
      headers: {},
      body: '',
      region: 'cn-beijing',
      service: 'iam',
      date: new Date('2024-06-19T07:13:06Z'),
      signedHeaders: ['host', 'x-date'],
    },
    {
      accessKeyId: 'AKLTYWViMTVmZGYzM2E0NDI5Mzk2MDZjNjFmMjc2MjRjMzg',
      secretAccessKey: 'WkRZeE1EQmxPVGhsWWpWak5HVmtNbUUxTXpZeU9UVXlOMlE1TmpZeVlqTQ==',
    },
  );

  it('builds the canonical request byte for byte', () => {
    expect(parts.canonicalRequest).toBe(
      [
        'GET',
        '/',
        'Action=ListUsers&Limit=10&Offset=0&Version=2018-01-01',
        'host:iam.volcengineapi.com',
        'x-date:20240619T071306Z',
        '',
        'host;x-date',
        EMPTY_SHA256,
      ].join('\n'),
    );
    expect(sha256Hex(parts.canonicalRequest)).toBe('5ed5bca3905e1fcbf789abb56a17c2d819674a3bcfa468ae476bd1ea80d135cb');
  });

  it('builds the string to sign, signing key and signature', () => {
    expect(parts.stringToSign).toBe(
      'HMAC-SHA256\n20240619T071306Z\n20240619/cn-beijing/iam/request\n5ed5bca3905e1fcbf789abb56a17c2d819674a3bcfa468ae476bd1ea80d135cb',
    );
    expect(parts.signingKey.toString('hex')).toBe('abee62e533a58934c49954459a3c3237d2fccea517c9a7c8a2651d8ea7779826');
    expect(parts.signature).toBe('e31c4558bcfe08a286001f59cedbf0791ffd0b2362f10e55ee2627467bcdde93');
    expect(parts.authorization).toBe(
      'HMAC-SHA256 Credential=AKLTYWViMTVmZGYzM2E0NDI5Mzk2MDZjNjFmMjc2MjRjMzg/20240619/cn-beijing/iam/request, ' +
        'SignedHeaders=host;x-date, Signature=e31c4558bcfe08a286001f59cedbf0791ffd0b2362f10e55ee2627467bcdde93',
    );
  });
});

describe('vector B (vefaas CreateSandbox POST)', () => {
  const body =
    '{"FunctionId": "fn-test", "Timeout": 60, "InstanceImageInfo": {"Image": "img:1", "Port": 8000, "Command": "python3 -m swerex.server --auth-token t"}}';
  const BODY_SHA = 'b1d9bcf911869f24609016c70a0ae831cf74715b8b72e315b238925f61e42806';
  const creds = { accessKeyId: 'AKLTtestAccessKey', secretAccessKey: 'testSecretKey' };
  const sign = (signedHeaders?: string[]) =>
    signRequestParts(
      {
        method: 'POST',
        url: new URL('https://open.volcengineapi.com/?Action=CreateSandbox&Version=2024-06-06'),
        headers: { 'Content-Type': 'application/json' },
        body,
        region: 'cn-beijing',
        service: 'vefaas',
        date: new Date('2025-01-02T03:04:05Z'),
        ...(signedHeaders ? { signedHeaders } : {}),
      },
      creds,
    );

  it('has the published body hash and signing key', () => {
    expect(Buffer.byteLength(body)).toBe(149);
    expect(sha256Hex(body)).toBe(BODY_SHA);
    expect(sign().signingKey.toString('hex')).toBe('a656bed9221629018b6d26742ef58ef087a74cf2e768c18bd637e3cc7c5d3ab2');
  });

  it('B1: signs content-type;host;x-content-sha256;x-date by default', () => {
    const b1 = sign();
    expect(b1.signedHeaders).toEqual(['content-type', 'host', 'x-content-sha256', 'x-date']);
    expect(b1.canonicalRequest).toBe(
      [
        'POST',
        '/',
        'Action=CreateSandbox&Version=2024-06-06',
        'content-type:application/json',
        'host:open.volcengineapi.com',
        `x-content-sha256:${BODY_SHA}`,
        'x-date:20250102T030405Z',
        '',
        'content-type;host;x-content-sha256;x-date',
        BODY_SHA,
      ].join('\n'),
    );
    expect(sha256Hex(b1.canonicalRequest)).toBe('0b476c8b03b2e503a3a1d17fc56c002745a9c1dafa814b9e589696180c63e9b7');
    expect(b1.stringToSign).toBe(
      'HMAC-SHA256\n20250102T030405Z\n20250102/cn-beijing/vefaas/request\n0b476c8b03b2e503a3a1d17fc56c002745a9c1dafa814b9e589696180c63e9b7',
    );
    expect(b1.signature).toBe('52390ae5e81904306f8a9fc10c2cca64d09916cd8ebbb8dda91575581fd1a7a3');
    expect(b1.headers).toEqual({
      'Content-Type': 'application/json',
      Host: 'open.volcengineapi.com',
      'X-Date': '20250102T030405Z',
      'X-Content-Sha256': BODY_SHA,
      Authorization:
        'HMAC-SHA256 Credential=AKLTtestAccessKey/20250102/cn-beijing/vefaas/request, ' +
        'SignedHeaders=content-type;host;x-content-sha256;x-date, Signature=52390ae5e81904306f8a9fc10c2cca64d09916cd8ebbb8dda91575581fd1a7a3',
    });
  });

  it('B2: host;x-content-sha256;x-date', () => {
    const b2 = sign(['x-date', 'host', 'x-content-sha256']);
    expect(sha256Hex(b2.canonicalRequest)).toBe('46b273f0f25929310b8e4acb73f56d14fe9062d69605c8c1bd65ab087813fc44');
    expect(b2.signature).toBe('546ae4dfcc945c3eb1cab61cf440abf9dc40333b662bcad1a44fb0ef3cd4fd4d');
    expect(b2.authorization).toContain('SignedHeaders=host;x-content-sha256;x-date, Signature=546ae4df');
  });

  it('B3: x-content-sha256;x-date', () => {
    const b3 = sign(['x-content-sha256', 'x-date']);
    expect(sha256Hex(b3.canonicalRequest)).toBe('80a18a1168341ecf6572fdfe68f3db8e0767a7c41520b5019dd26e898afd1670');
    expect(b3.signature).toBe('c777c60893194d719769be5bbb0c1fb4df11e9d9f42d084d3f7fffc3c64f5a49');
  });
});

describe('signing helpers', () => {
  it('adds X-Security-Token with STS credentials and signs it', () => {
    const headers = signRequest(
      {
        method: 'POST',
        url: new URL('http://127.0.0.1:9000/?Action=X&Version=1'),
        headers: {},
        body: '{}',
        region: 'r',
        service: 's',
      },
      { accessKeyId: 'ak', secretAccessKey: 'sk', sessionToken: 'tok' },
    );
    expect(headers['X-Security-Token']).toBe('tok');
    expect(headers['Host']).toBe('127.0.0.1:9000');
    expect(headers['Authorization']).toMatch(/SignedHeaders=host;x-content-sha256;x-date;x-security-token,/);
  });

  it('signs the exact bytes of a Uint8Array body like the same string', () => {
    const base = {
      method: 'POST',
      url: new URL('https://h/'),
      headers: {},
      region: 'r',
      service: 's',
      date: new Date(0),
    };
    const creds = { accessKeyId: 'ak', secretAccessKey: 'sk' };
    expect(signRequest({ ...base, body: new TextEncoder().encode('{"a":"é"}') }, creds)).toEqual(
      signRequest({ ...base, body: '{"a":"é"}' }, creds),
    );
  });

  it('encodes queries per RFC 3986 and sorts by key', () => {
    expect(rfc3986Encode("a b*'!~._-")).toBe('a%20b%2A%27%21~._-');
    expect(canonicalQuery(parseQuery('?b=2&a=x%20y&a=1&c'))).toBe('a=1&a=x%20y&b=2&c=');
    expect(parseQuery('k=a+b')).toEqual([['k', 'a+b']]);
  });

  it('formats and parses X-Date', () => {
    expect(formatXDate(new Date('2025-01-02T03:04:05.678Z'))).toBe('20250102T030405Z');
    expect(parseXDate('20250102T030405Z')?.toISOString()).toBe('2025-01-02T03:04:05.000Z');
    expect(parseXDate('20251302T030405Z')).toBeUndefined();
    expect(parseXDate('2025-01-02T03:04:05Z')).toBeUndefined();
  });
});

describe('deriveSigningKey (the last key is reused)', () => {
  it('gives the fresh HMAC chain for every secret, date, region and service, also after another key', () => {
    const fresh = (secret: string, date: string, region: string, service: string): string => {
      const h = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data, 'utf8').digest();
      return h(h(h(h(Buffer.from(secret, 'utf8'), date), region), service), 'request').toString('hex');
    };
    const inputs: Array<[string, string, string, string]> = [
      ['sk-a', '20261201', 'cn-beijing', 'vefaas'],
      ['sk-a', '20261201', 'cn-beijing', 'vefaas'],
      ['sk-b', '20261201', 'cn-beijing', 'vefaas'],
      ['sk-b', '20261202', 'cn-beijing', 'vefaas'],
      ['sk-b', '20261202', 'cn-shanghai', 'vefaas'],
      ['sk-b', '20261202', 'cn-shanghai', 'iam'],
      ['sk-a', '20261201', 'cn-beijing', 'vefaas'],
    ];
    for (const input of inputs) expect(deriveSigningKey(...input).toString('hex')).toBe(fresh(...input));
  });
});
