import { isIP } from 'node:net';
import { isLoopbackHost } from '@rollout-fleet/shared';

// One definition for every server of the project (dashboard, vefaas-local): it lives in shared.
export { isLoopbackHost };

/** The request's Host header (`name[:port]`, IPv6 in brackets) names a loopback address. */
export function isLoopbackHostHeader(hostHeader: string | undefined): boolean {
  if (hostHeader === undefined || hostHeader === '') return false;
  const name = hostHeader.startsWith('[')
    ? hostHeader.slice(0, hostHeader.indexOf(']') + 1)
    : hostHeader.replace(/:\d+$/, '');
  return isLoopbackHost(name);
}

/** `host:port` as it goes in a URL (IPv6 literals in brackets). */
export function hostForUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
