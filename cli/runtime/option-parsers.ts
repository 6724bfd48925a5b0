/** Parsers for numeric command-line options; commander shows their message next to the flag. */
import { InvalidArgumentError } from 'commander';

function integerIn(value: string, min: number, max: number, what: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) throw new InvalidArgumentError(`expected ${what}`);
  return parsed;
}

export function positiveInteger(value: string): number {
  return integerIn(value, 1, Number.MAX_SAFE_INTEGER, 'a positive integer');
}

export function nonNegativeInteger(value: string): number {
  return integerIn(value, 0, Number.MAX_SAFE_INTEGER, 'a non-negative integer');
}

export function portNumber(value: string): number {
  return integerIn(value, 0, 65_535, 'a port number (0-65535)');
}
