/**
 * Coercers from one environment string to a typed value. Each field carries its default (so the
 * docs table can read it back) and reports problems as "what is wrong; what to do". Messages never
 * contain the value: load-config.ts decides whether a value may be quoted (secrets never are).
 * An unset variable arrives as `undefined` (empty strings are treated as unset before parsing).
 */
import { z } from 'zod';
import { RedisUrlError, parseRedisUrl } from '../redis/redis-url.js';

const raw = z.string().optional();

function fail(ctx: z.RefinementCtx, message: string): never {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

/** Optional free text with no default (ids, keys, passwords). */
export function optionalText() {
  return raw;
}

export function text(defaultValue: string) {
  return raw.transform((value) => value ?? defaultValue);
}

function integer(defaultValue: number, min: number) {
  const bound = min === 0 ? 'a whole number ≥ 0' : `a whole number ≥ ${min}`;
  return raw.transform((value, ctx): number => {
    if (value === undefined) return defaultValue;
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min)
      return fail(ctx, `is not ${bound}; set ${bound} or unset it for the default ${defaultValue}`);
    return parsed;
  });
}

/** An optional whole number ≥ 0 with no default (the product derives one when it is unset). */
export function optionalNonNegativeInt() {
  return raw.transform((value, ctx): number | undefined => {
    if (value === undefined) return undefined;
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed))
      return fail(ctx, 'is not a whole number ≥ 0; set a whole number ≥ 0 or unset it');
    return parsed;
  });
}

export function positiveInt(defaultValue: number) {
  return integer(defaultValue, 1);
}

export function nonNegativeInt(defaultValue: number) {
  return integer(defaultValue, 0);
}

/** A number > 0, fractions allowed (rates such as creates per second). */
export function positiveNumber(defaultValue: number) {
  return raw.transform((value, ctx): number => {
    if (value === undefined) return defaultValue;
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed) || parsed <= 0)
      return fail(ctx, `is not a number > 0; set one such as ${defaultValue}`);
    return parsed;
  });
}

/** Any finite number (rewards may be negative or fractional). */
export function finiteNumber(defaultValue: number) {
  return raw.transform((value, ctx): number => {
    if (value === undefined) return defaultValue;
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed))
      return fail(ctx, `is not a number; set a number such as ${defaultValue}`);
    return parsed;
  });
}

const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

export function boolean(defaultValue: boolean) {
  return raw.transform((value, ctx): boolean => {
    if (value === undefined) return defaultValue;
    const word = value.trim().toLowerCase();
    if (TRUE.has(word)) return true;
    if (FALSE.has(word)) return false;
    return fail(ctx, 'is not a boolean; use true/false, 1/0 or yes/no');
  });
}

export function oneOf<const T extends readonly [string, ...string[]]>(choices: T, defaultValue: T[number]) {
  return raw.transform((value, ctx): T[number] => {
    if (value === undefined) return defaultValue;
    const word = value.trim().toLowerCase();
    const match = choices.find((choice) => choice === word);
    return match ?? fail(ctx, `is not one of ${choices.join(', ')}; pick one of them`);
  });
}

function checkUrl(value: string, protocols: readonly string[], ctx: z.RefinementCtx): string {
  const expected = protocols.map((p) => `${p}//`).join(' or ');
  let parsed: URL;
  try {
    parsed = new URL(value.trim());
  } catch {
    return fail(ctx, `is not a URL; give a full ${expected} URL`);
  }
  if (!protocols.includes(parsed.protocol)) return fail(ctx, `is not a ${expected} URL; give a full ${expected} URL`);
  // Trailing slashes removed so callers can append paths.
  return value.trim().replace(/\/+$/, '');
}

export function url(protocols: readonly string[], defaultValue: string) {
  return raw.transform((value, ctx): string => (value === undefined ? defaultValue : checkUrl(value, protocols, ctx)));
}

export function optionalUrl(protocols: readonly string[]) {
  return raw.transform((value, ctx): string | undefined =>
    value === undefined ? undefined : checkUrl(value, protocols, ctx),
  );
}

/** REDIS_URL: one server (`redis://`, `rediss://`) or a cluster (`redis+cluster://host:port,…`); see redis-url.ts. */
export function redisUrl(defaultValue: string) {
  return raw.transform((value, ctx): string => {
    if (value === undefined) return defaultValue;
    try {
      return parseRedisUrl(value).url;
    } catch (error) {
      if (error instanceof RedisUrlError) return fail(ctx, error.message);
      throw error;
    }
  });
}
