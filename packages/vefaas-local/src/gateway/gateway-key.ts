/**
 * Gateway key (APIG Key-Auth, vefaas-api.md §3, format UNCERTAIN): accepted as `Authorization: <key>`,
 * `Authorization: Bearer <key>` or query `Authorization=<key>`.
 */
import { timingSafeEqual } from 'node:crypto';

export function presentedKey(authorization: string | undefined, url: URL): string | undefined {
  if (authorization !== undefined && authorization !== '') {
    const bearer = /^Bearer\s+(.+)$/i.exec(authorization);
    return (bearer?.[1] ?? authorization).trim();
  }
  return url.searchParams.get('Authorization') ?? undefined;
}

export function keyMatches(expected: string, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}
