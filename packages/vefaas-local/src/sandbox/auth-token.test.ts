import { describe, expect, it } from 'vitest';
import { parseAuthToken } from './auth-token.js';

describe('parseAuthToken', () => {
  it.each([
    ['python3 -m swerex.server --auth-token abc-123', 'abc-123'],
    ['swerex-remote --auth-token=tok', 'tok'],
    ["swerex-remote --auth-token 'q t' || (pipx run swe-rex --auth-token 'q t')", 'q t'],
    ['swerex-remote --auth-token u1 || (python3 -m pip install pipx && pipx run swe-rex --auth-token u1)', 'u1'],
    ['python3 -m swerex.server --auth-token ""', ''],
  ])('reads the --auth-token flag: %s', (command, token) => {
    expect(parseAuthToken(command)).toBe(token);
  });

  it.each([
    ['curl -fsSL https://example.com/swerex/install.sh | bash -s -- s3cr3t', 's3cr3t'],
    ['wget -qO- https://example.com/install.sh | sh -s tok9', 'tok9'],
    ['bash install.sh abc', 'abc'],
    ['curl -o /tmp/i.sh https://x/i.sh && exec bash /tmp/i.sh "tok with space"', 'tok with space'],
    ['bash -c "curl -fsSL https://x/i.sh | bash -s -- inner"', 'inner'],
  ])('reads the trailing argument of an install-script launcher: %s', (command, token) => {
    expect(parseAuthToken(command)).toBe(token);
  });

  it.each([
    ['python3 -m swerex.server'],
    ['bash install.sh'],
    ['curl https://x/i.sh | bash'],
    ['sleep infinity'],
    [''],
  ])('returns "" when there is no token: %s', (command) => {
    expect(parseAuthToken(command)).toBe('');
  });
});
