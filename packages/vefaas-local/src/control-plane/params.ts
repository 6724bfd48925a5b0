/** Readers for PascalCase request fields; each throws the ApiError the real service would answer with. */
import { ApiError, invalidParameter, missingParameter } from './envelope.js';

export type Body = Record<string, unknown>;

export function requiredString(body: Body, name: string): string {
  const value = body[name];
  if (value === undefined || value === null || value === '') throw missingParameter(name);
  if (typeof value !== 'string') throw invalidParameter(name, 'must be a string');
  return value;
}

export function optionalString(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidParameter(name, 'must be a string');
  return value;
}

export function optionalInt(body: Body, name: string, range?: { min: number; max: number }): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidParameter(name, 'must be an integer');
  if (range && (value < range.min || value > range.max)) {
    throw invalidParameter(name, `must be between ${range.min} and ${range.max}`);
  }
  return value;
}

export function optionalStringMap(body: Body, name: string): Record<string, string> | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParameter(name, 'must be an object of strings');
  const out: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw invalidParameter(`${name}.${key}`, 'must be a string');
    out[key] = item;
  }
  return out;
}

export function optionalObject(body: Body, name: string): Body | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParameter(name, 'must be an object');
  return value as Body;
}

/** Rejects keys outside `allowed` (a misspelled `InstanceImageInfo.ImageUrl` gets a 400 from the real service). */
export function rejectUnknownKeys(body: Body, name: string, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw invalidParameter(`${name}.${key}`, 'unknown field');
  }
}

export function requireFunction(body: Body, functionId: string): string {
  const id = requiredString(body, 'FunctionId');
  if (id !== functionId) throw new ApiError('ResourceNotFound', `Function ${id} not found`);
  return id;
}
