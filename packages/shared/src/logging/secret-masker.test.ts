import { describe, expect, it } from 'vitest';
import { MIN_MASKED_LENGTH, SECRET_MASK, createSecretMasker, episodeSecrets } from './secret-masker.js';

const masker = (...secrets: string[]) => {
  const made = createSecretMasker(secrets);
  if (!made) throw new Error('expected a masker');
  return made;
};

describe('createSecretMasker', () => {
  it('replaces every occurrence of a secret with the marker', () => {
    expect(masker('tok-123456').mask('a tok-123456 b tok-123456tok-123456 c')).toBe(
      `a ${SECRET_MASK} b ${SECRET_MASK} c`,
    );
    expect(SECRET_MASK).toBe('***');
  });

  it('leaves text without a secret as it is (same string)', () => {
    const text = 'nothing to see here';
    expect(masker('tok-123456').mask(text)).toBe(text);
  });

  it('masks overlapping secrets as one span, so no part of either shows', () => {
    // "abcdefXY" and "XYZ12345" overlap in "abcdefXYZ12345": a leftmost-first replace would leave "Z12345".
    const m = masker('abcdefXY', 'XYZ12345');
    expect(m.mask('>abcdefXYZ12345<')).toBe(`>${SECRET_MASK}<`);
    expect(m.mask('>XYZ12345 abcdefXY<')).toBe(`>${SECRET_MASK} ${SECRET_MASK}<`);
  });

  it('masks a secret that is a prefix of another whole, in either order', () => {
    for (const m of [
      masker('prefix-secret', 'prefix-secret-longer'),
      masker('prefix-secret-longer', 'prefix-secret'),
    ]) {
      expect(m.mask('x prefix-secret-longer y')).toBe(`x ${SECRET_MASK} y`);
      expect(m.mask('x prefix-secret y')).toBe(`x ${SECRET_MASK} y`);
    }
  });

  it('masks unicode secrets, raw, JSON-escaped as JavaScript and as Python (ensure_ascii) write them', () => {
    const secret = 'пароль-🔑-"x"';
    const m = masker(secret);
    expect(m.mask(`A=${secret}\n`)).toBe(`A=${SECRET_MASK}\n`);
    expect(m.mask(JSON.stringify({ a: secret }))).toBe(`{"a":"${SECRET_MASK}"}`);
    const python = '"\\u043f\\u0430\\u0440\\u043e\\u043b\\u044c-\\ud83d\\udd11-\\"x\\""';
    expect(m.mask(`{"a": ${python}}`)).toBe(`{"a": "${SECRET_MASK}"}`);
  });

  it('masks the base64 of a secret at every byte alignment, inside longer base64 and with echo’s newline', () => {
    const secret = 'hf_Zk4pQ9sLmW2xR7';
    const m = masker(secret);
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:']) {
      const encoded = Buffer.from(`${prefix}${secret}\n`).toString('base64');
      const masked = m.mask(`data: ${encoded}`);
      expect(masked).toContain(SECRET_MASK);
      // What is left of the encoding cannot be decoded back to the secret (at most the bits it shares with its neighbours).
      const left = masked.slice('data: '.length).split(SECRET_MASK).join('');
      expect(left.length).toBeLessThanOrEqual(Math.ceil(((prefix.length + 1) * 8) / 6) + 1 + 4);
    }
    // The plain `base64` of the value alone (with padding).
    expect(m.mask(Buffer.from(secret).toString('base64'))).toMatch(
      new RegExp(`^${SECRET_MASK.replace(/\*/g, '\\*')}.{0,3}$`),
    );
  });

  it('masks each line of a multi-line secret (a key printed a line at a time or with \\r\\n)', () => {
    const key = '-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END KEY-----';
    const m = masker(key);
    expect(m.mask(key)).toBe(SECRET_MASK);
    expect(m.mask(key.replace(/\n/g, '\r\n'))).not.toContain('MIIEvQIBADANBgkqhkiG9w0B');
  });

  it('ignores empty and too-short secrets, and makes no masker when nothing is left', () => {
    expect(MIN_MASKED_LENGTH).toBe(6);
    expect(createSecretMasker([])).toBeUndefined();
    expect(createSecretMasker(['', 'a', '12345'])).toBeUndefined();
    // A 1-character "secret" would mask every "a" in every observation: it is left out, the longer one is kept.
    const m = masker('a', '123456');
    expect(m.mask('a 123456 banana')).toBe(`a ${SECRET_MASK} banana`);
  });

  it('maskDeep masks every string of a structure, copy-on-write', () => {
    const m = masker('tok-123456');
    const value = { a: 'x tok-123456', b: [1, 'tok-123456', { c: null }], d: { e: 'clean' }, f: true };
    const masked = m.maskDeep(value);
    expect(masked).toEqual({ a: `x ${SECRET_MASK}`, b: [1, SECRET_MASK, { c: null }], d: { e: 'clean' }, f: true });
    expect(value.a).toBe('x tok-123456');
    expect(masked.d).toBe(value.d);
    const clean = { a: ['b'] };
    expect(m.maskDeep(clean)).toBe(clean);
  });
});

describe('episodeSecrets', () => {
  it('takes secret-named variables only, and names those too short to mask', () => {
    const env = {
      API_TOKEN: 'sk-1234567',
      OPENAI_API_KEY: 'sk-abcdefg',
      ssh_key: 'ssh-ed25519-AAAA',
      CLIENT_SECRET: 'client-secret-1',
      DB_PASSWORD: 'pw',
      PYTHONPATH: '/testbed',
      LANG: 'C.UTF-8',
      KEYBOARD_LAYOUT: 'us-international',
      EMPTY_TOKEN: '',
    };
    expect(episodeSecrets(env)).toEqual({
      values: ['sk-1234567', 'sk-abcdefg', 'ssh-ed25519-AAAA', 'client-secret-1'],
      tooShort: ['DB_PASSWORD'],
    });
  });
});
