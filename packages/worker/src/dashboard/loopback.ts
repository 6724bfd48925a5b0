import { isIP } from 'node:net';

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1, ::ffff:127.x and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) return lower === '::1' || lower === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(lower);
  return false;
}

/** The request's Host header (`name[:port]`, IPv6 in brackets) names a loopback address. */
export function isLoopbackHostHeader(hostHeader: string | undefined): boolean {
  if (hostHeader === undefined || hostHeader === '') return false;
  const name = hostHeader.startsWith('[') ? hostHeader.slice(0, hostHeader.indexOf(']') + 1) : hostHeader.replace(/:\d+$/, '');
  return isLoopbackHost(name);
}

/** `host:port` as it goes in a URL (IPv6 literals in brackets). */
export function hostForUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
