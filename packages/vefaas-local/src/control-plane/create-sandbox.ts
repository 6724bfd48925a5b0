/**
 * Wire contract: CreateSandbox (vefaas-api.md §1.3) → `{SandboxId, AssignStatus}`.
 * Errors: MissingParameter (FunctionId), ResourceNotFound (unknown function), 400 `Command is empty` (Image
 * without Command), InvalidParameter (bad Timeout/TimeoutUnit/ranges/unknown InstanceImageInfo field),
 * AccountFlowLimitExceeded 429 (throttle fault), 500 UserTimeoutError `function_cold_start_timeout` (cold-start
 * timeout: injected, or the sandbox did not come up within the cold-start timeout in 'started' mode).
 */
import { randomUUID } from 'node:crypto';
import type { ActionContext, ActionHandler } from './action-context.js';
import { ApiError, invalidParameter } from './envelope.js';
import { DEFAULT_LIFETIME_MS, readLifetimeMs } from './lifetime.js';
import {
  type Body,
  optionalInt,
  optionalObject,
  optionalString,
  optionalStringMap,
  rejectUnknownKeys,
  requireFunction,
} from './params.js';
import type { KeyValue, SandboxSpec } from '../registry/sandbox-record.js';

const IMAGE_INFO_FIELDS = ['Image', 'Command', 'Port', 'Id'] as const;

export const createSandbox: ActionHandler = async (body, context) => {
  requireFunction(body, context.settings.functionId);
  const spec = readSpec(body, context);
  const lifetimeMs =
    readLifetimeMs(body, { minLifetimeMs: context.settings.minLifetimeMs, required: false }) ?? DEFAULT_LIFETIME_MS;
  const throttled = context.faults.admitCreate();
  if (throttled) throw new ApiError(throttled.code, throttled.message, throttled.status);
  const coldStart = context.faults.coldStart();
  if (coldStart.timeout) throw coldStartTimeout('injected fault');

  const { record, started } = context.manager.create(spec, lifetimeMs, coldStart.delayMs);
  if (context.settings.createReturns === 'started') {
    await started;
    if (record.startTimedOut) {
      // Not alive within the cold-start timeout: the real service surfaces this as a CreateSandbox error.
      context.manager.kill(record, 'kill');
      throw coldStartTimeout(record.errorMessage);
    }
  }
  return { SandboxId: record.id, AssignStatus: 'Assigned' };
};

function coldStartTimeout(why: string): ApiError {
  return new ApiError('UserTimeoutError', `function_cold_start_timeout: ${why}`, 500);
}

function readSpec(body: Body, context: ActionContext): SandboxSpec {
  const defaults = context.settings.functionDefaults;
  const info = optionalObject(body, 'InstanceImageInfo');
  let image = defaults.image;
  let command = defaults.command;
  let port = defaults.port;
  let imageId = '';
  if (info !== undefined) {
    rejectUnknownKeys(info, 'InstanceImageInfo', IMAGE_INFO_FIELDS);
    image = optionalString(info, 'Image') ?? image;
    imageId = optionalString(info, 'Id') ?? '';
    const given = optionalString(info, 'Command');
    if (optionalString(info, 'Image') !== undefined && (given === undefined || given.trim() === '')) {
      throw new ApiError('InvalidParameter', 'Command is empty', 400);
    }
    command = given ?? command;
    port = optionalInt(info, 'Port', { min: 1, max: 65535 }) ?? port;
  }
  if (command.trim() === '') throw new ApiError('InvalidParameter', 'Command is empty', 400);
  return {
    image,
    imageId,
    command,
    port,
    envs: readEnvs(body),
    metadata: optionalStringMap(body, 'Metadata') ?? {},
    cpuMilli: optionalInt(body, 'CpuMilli', { min: 250, max: 16000 }) ?? 1000,
    memoryMB: optionalInt(body, 'MemoryMB', { min: 512, max: 131072 }) ?? 2048,
    maxConcurrency: optionalInt(body, 'MaxConcurrency', { min: 10, max: 1000 }) ?? 100,
    requestTimeoutSeconds: optionalInt(body, 'RequestTimeout', { min: 1, max: 900 }) ?? 30,
    sessionId: optionalString(body, 'SessionId') ?? randomUUID(),
  };
}

function readEnvs(body: Body): KeyValue[] {
  const value = body['Envs'];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParameter('Envs', 'must be a list of {Key, Value}');
  return value.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null) throw invalidParameter(`Envs[${index}]`, 'must be {Key, Value}');
    const { Key, Value } = item as Record<string, unknown>;
    if (typeof Key !== 'string' || Key === '' || typeof Value !== 'string') {
      throw invalidParameter(`Envs[${index}]`, 'Key and Value must be strings');
    }
    return { Key, Value };
  });
}
