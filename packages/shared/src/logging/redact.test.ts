import { describe, expect, it } from 'vitest';
import { isSecretKey, redactDeep, redactSecrets } from './redact.js';

describe('redaction helpers', () => {
  it('recognises secret field names in any spelling and leaves look-alikes alone', () => {
    for (const key of [
      'authorization',
      'Authorization',
      'x-api-key',
      'X-API-Key',
      'secretAccessKey',
      'VEFAAS_SECRET_KEY',
      'accessKeyId',
      'gatewayKey',
      'authToken',
      'token',
      'password',
      'RF_DASHBOARD_PASSWORD',
      'cookie',
    ]) {
      expect({ key, secret: isSecretKey(key) }).toEqual({ key, secret: true });
    }
    for (const key of ['tokens_sent', 'maxTokens', 'sandboxId', 'keyword', 'region', 'X-Faas-Instance-Name']) {
      expect({ key, secret: isSecretKey(key) }).toEqual({ key, secret: false });
    }
  });

  it('returns the same object when nothing is secret, and a copy when something is', () => {
    const clean = { a: { b: [1, 2] } };
    expect(redactDeep(clean)).toBe(clean);
    const dirty = { a: { token: 't' }, keep: { x: 1 } };
    const out = redactDeep(dirty);
    expect(out).toEqual({ a: { token: '[REDACTED]' }, keep: { x: 1 } });
    expect(out.keep).toBe(dirty.keep);
    expect(dirty.a.token).toBe('t');
  });

  it('survives cycles by stopping at a depth limit', () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    expect(() => redactDeep(loop)).not.toThrow();
  });

  it('replaces known secrets in free text, longest first, skipping empty ones', () => {
    expect(redactSecrets('swerex --auth-token abc123 --x abc', ['abc', 'abc123', '', undefined])).toBe(
      'swerex --auth-token [REDACTED] --x [REDACTED]',
    );
    expect(redactSecrets('{"cmd":"tok\\"en"}', ['tok"en'])).toBe('{"cmd":"[REDACTED]"}');
    expect(redactSecrets('nothing here', [])).toBe('nothing here');
  });
});
