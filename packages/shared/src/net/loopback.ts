import { isIP } from 'node:net';

/**
 * True for addresses only this machine can reach: 127.0.0.0/8, ::1, ::ffff:127.x and `localhost`. Anything
 * else — 0.0.0.0, ::, a LAN address, a host name — counts as reachable from the network.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(lower);
  return false;
}
