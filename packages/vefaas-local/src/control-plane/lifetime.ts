/**
 * `Timeout` + `TimeoutUnit` → lifetime in ms. Real range: 3–1440 minutes (vefaas-api.md §1.3). Locally the
 * minimum is configurable (default 1 second) so tests can watch a sandbox expire; the maximum stays 1440 min.
 */
import { invalidParameter, missingParameter } from './envelope.js';
import { type Body, optionalInt, optionalString } from './params.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
export const MAX_LIFETIME_MS = 1440 * MINUTE;
export const DEFAULT_LIFETIME_MS = 60 * MINUTE;

export function readLifetimeMs(body: Body, options: { minLifetimeMs: number; required: boolean }): number | undefined {
  const timeout = optionalInt(body, 'Timeout');
  const unit = optionalString(body, 'TimeoutUnit') ?? 'minute';
  if (unit !== 'minute' && unit !== 'second') throw invalidParameter('TimeoutUnit', 'must be "minute" or "second"');
  if (timeout === undefined) {
    if (options.required) throw missingParameter('Timeout');
    return undefined;
  }
  const ms = timeout * (unit === 'second' ? SECOND : MINUTE);
  if (ms < options.minLifetimeMs || ms > MAX_LIFETIME_MS) {
    throw invalidParameter('Timeout', `lifetime must be between ${options.minLifetimeMs / SECOND} s and 1440 minutes`);
  }
  return ms;
}
