/**
 * Hand-written parsers for the hot SWE-ReX shapes: the `/run_in_session` request and the answers every call
 * gets. The zod schemas in models.ts stay the contract: each parser here gives exactly the schema's output for
 * an input it accepts (fast-models.test.ts checks that against zod on generated inputs), and gives up
 * (`undefined`) on anything else, which the caller then parses with zod, for zod's result or its error.
 * At a thousand steps a second, zod's generic parse of two objects per step was a visible share of the
 * worker's CPU and garbage.
 */
import type { z } from 'zod';
import {
  BashObservationSchema,
  CloseBashSessionResponseSchema,
  CommandResponseSchema,
  CreateBashSessionResponseSchema,
  EmptyResponseSchema,
  IsAliveResponseSchema,
  type BashAction,
  type BashActionInput,
  type BashObservation,
  type CommandResponse,
  type IsAliveResponse,
} from './models.js';

const CHECKS: ReadonlySet<unknown> = new Set(['silent', 'raise', 'ignore']);

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** A string field with a default: the value, the default when absent, `undefined` when it has another type. */
function str(value: unknown, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  return typeof value === 'string' ? value : undefined;
}

/** An integer-or-null field defaulting to null; `false` when it has another type. */
function intOrNull(value: unknown): number | null | false {
  if (value === undefined || value === null) return null;
  return Number.isSafeInteger(value) ? (value as number) : false;
}

/** `BashActionSchema.parse(input)` for a well-typed input; `undefined` otherwise. */
export function fastBashAction(input: BashActionInput): BashAction | undefined {
  const { command, timeout, is_interactive_command, is_interactive_quit, check, expect, action_type } = input;
  const session = str(input.session, 'default');
  const errorMsg = str(input.error_msg, '');
  if (typeof command !== 'string' || session === undefined || errorMsg === undefined) return undefined;
  if (timeout !== undefined && timeout !== null && !(isNumber(timeout) && timeout > 0)) return undefined;
  if (is_interactive_command !== undefined && typeof is_interactive_command !== 'boolean') return undefined;
  if (is_interactive_quit !== undefined && typeof is_interactive_quit !== 'boolean') return undefined;
  if (check !== undefined && !CHECKS.has(check)) return undefined;
  if (expect !== undefined && !isStringArray(expect)) return undefined;
  if (action_type !== undefined && action_type !== 'bash') return undefined;
  return {
    command,
    session,
    timeout: timeout ?? null,
    is_interactive_command: is_interactive_command ?? false,
    is_interactive_quit: is_interactive_quit ?? false,
    check: check ?? 'raise',
    error_msg: errorMsg,
    expect: expect === undefined ? [] : [...expect],
    action_type: 'bash',
  };
}

type Json = Record<string, unknown>;

function bashObservation(json: Json): BashObservation | undefined {
  const output = str(json['output'], '');
  const exitCode = intOrNull(json['exit_code']);
  const failureReason = str(json['failure_reason'], '');
  const expectString = str(json['expect_string'], '');
  const sessionType = json['session_type'];
  if (output === undefined || exitCode === false || failureReason === undefined || expectString === undefined)
    return undefined;
  if (sessionType !== undefined && sessionType !== 'bash') return undefined;
  return {
    output,
    exit_code: exitCode,
    failure_reason: failureReason,
    expect_string: expectString,
    session_type: 'bash',
  };
}

function commandResponse(json: Json): CommandResponse | undefined {
  const stdout = str(json['stdout'], '');
  const stderr = str(json['stderr'], '');
  const exitCode = intOrNull(json['exit_code']);
  if (stdout === undefined || stderr === undefined || exitCode === false) return undefined;
  return { stdout, stderr, exit_code: exitCode };
}

function isAlive(json: Json): IsAliveResponse | undefined {
  const message = str(json['message'], '');
  return typeof json['is_alive'] === 'boolean' && message !== undefined
    ? { is_alive: json['is_alive'], message }
    : undefined;
}

function sessionType(json: Json): { session_type: 'bash' } | undefined {
  const type = json['session_type'];
  return type === undefined || type === 'bash' ? { session_type: 'bash' } : undefined;
}

function createSession(json: Json): { output: string; session_type: 'bash' } | undefined {
  const output = str(json['output'], '');
  return output !== undefined && sessionType(json) ? { output, session_type: 'bash' } : undefined;
}

/** Answer parsers by schema; a schema without one is parsed by zod. */
const RESPONSE_PARSERS = new Map<z.ZodType, (json: Json) => unknown>([
  [BashObservationSchema, bashObservation],
  [CommandResponseSchema, commandResponse],
  [IsAliveResponseSchema, isAlive],
  [CreateBashSessionResponseSchema, createSession],
  [CloseBashSessionResponseSchema, sessionType],
  [EmptyResponseSchema, () => ({})],
]);

/** `schema.parse(json)` for an answer of a well-known shape; `undefined` when zod must decide. */
export function fastResponse<S extends z.ZodType>(schema: S, json: unknown): z.output<S> | undefined {
  const parse = RESPONSE_PARSERS.get(schema);
  if (parse === undefined || typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  return parse(json as Json) as z.output<S> | undefined;
}
