import { describe, expect, it } from 'vitest';
import { offlineReason } from './verify.js';

describe('verify offline rule', () => {
  const cloud = ['https://open.volcengineapi.com', 'https://sd0abc.apigateway-cn-beijing.volceapi.com'];

  it('is offline for the embedded host and for a sandbox host on a loopback address', () => {
    expect(offlineReason({ embedded: true, endpoints: [] })).toBe('offline: embedded vefaas-local');
    for (const local of [
      'http://127.0.0.1:8780',
      'http://localhost:8780/fn/x',
      'http://[::1]:8780',
      'http://127.8.9.10',
    ]) {
      expect(offlineReason({ embedded: false, endpoints: [cloud[0]!, local] }), local).toMatch(/loopback/);
    }
  });

  it('runs the pip step against real veFaaS, and the flags win over the default', () => {
    expect(offlineReason({ embedded: false, endpoints: cloud })).toBeUndefined();
    expect(
      offlineReason({ embedded: false, endpoints: ['http://127.0.0.1.example.com', 'http://10.0.0.1'] }),
    ).toBeUndefined();
    expect(offlineReason({ offlineFlag: true, embedded: false, endpoints: cloud })).toBe('offline: --offline');
    expect(offlineReason({ offlineFlag: false, embedded: true, endpoints: [] })).toBeUndefined();
  });
});
