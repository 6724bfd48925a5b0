/**
 * The hand-written parsers agree with the zod schemas (the contract): on generated inputs, well-typed or not,
 * an accepted input gives zod's exact output, and every input zod rejects is left to zod. Well-typed inputs
 * (what servers and callers send) must take the fast path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { fastBashAction, fastResponse } from './fast-models.js';
import {
  BashActionSchema,
  BashObservationSchema,
  CloseBashSessionResponseSchema,
  CommandResponseSchema,
  CreateBashSessionResponseSchema,
  EmptyResponseSchema,
  IsAliveResponseSchema,
  type BashActionInput,
} from './models.js';

/** A field that is absent, of the right kind, or of a wrong one. */
function field<T>(good: fc.Arbitrary<T>): fc.Arbitrary<T | unknown> {
  const wrong = fc.oneof(
    fc.constant(null),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.constant({}),
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: good },
    { weight: 1, arbitrary: wrong },
  );
}

function record(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const extra = fc.dictionary(fc.constantFrom('extra', 'other', 'x'), fc.jsonValue(), { maxKeys: 2 });
  return fc.tuple(fc.record(fields), extra).map(([known, more]) => {
    const out: Record<string, unknown> = { ...more };
    // Absent fields are left out or set to undefined: both mean "use the default".
    for (const [key, value] of Object.entries(known)) if (value !== undefined || key.length % 2 === 0) out[key] = value;
    return out;
  });
}

function agreesWithZod(schema: z.ZodType, input: unknown, fast: unknown): void {
  const parsed = schema.safeParse(input);
  if (fast !== undefined) {
    expect(parsed.success).toBe(true);
    expect(fast).toStrictEqual(parsed.data);
  }
}

const exitCode = fc.oneof(fc.constant(null), fc.integer({ min: -255, max: 255 }), fc.double(), fc.constant(2 ** 53));

describe('fast SWE-ReX parsers agree with the zod schemas', () => {
  it('run_in_session requests', () => {
    const action = record({
      command: field(fc.string()),
      session: field(fc.string()),
      timeout: field(
        fc.oneof(fc.constant(null), fc.constantFrom(0, -0, -1, 0.5, Infinity, NaN), fc.double({ min: -5, max: 1e6 })),
      ),
      is_interactive_command: field(fc.boolean()),
      is_interactive_quit: field(fc.boolean()),
      check: field(fc.constantFrom('silent', 'raise', 'ignore', 'other')),
      error_msg: field(fc.string()),
      expect: field(fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 })),
      action_type: field(fc.constantFrom('bash', 'bash_interrupt')),
    });
    fc.assert(
      fc.property(action, (input) => agreesWithZod(BashActionSchema, input, fastBashAction(input as BashActionInput))),
      { numRuns: 2000 },
    );
  });

  it('answers', () => {
    const cases: Array<[z.ZodType, fc.Arbitrary<Record<string, unknown>>]> = [
      [
        BashObservationSchema,
        record({
          output: field(fc.string()),
          exit_code: field(exitCode),
          failure_reason: field(fc.string()),
          expect_string: field(fc.string()),
          session_type: field(fc.constantFrom('bash', 'zsh')),
        }),
      ],
      [
        CommandResponseSchema,
        record({ stdout: field(fc.string()), stderr: field(fc.string()), exit_code: field(exitCode) }),
      ],
      [IsAliveResponseSchema, record({ is_alive: field(fc.boolean()), message: field(fc.string()) })],
      [
        CreateBashSessionResponseSchema,
        record({ output: field(fc.string()), session_type: field(fc.constantFrom('bash', 'zsh')) }),
      ],
      [CloseBashSessionResponseSchema, record({ session_type: field(fc.constantFrom('bash', 'zsh')) })],
      [EmptyResponseSchema, record({})],
    ];
    for (const [schema, arbitrary] of cases) {
      fc.assert(
        fc.property(fc.oneof({ weight: 9, arbitrary }, { weight: 1, arbitrary: fc.jsonValue() }), (json) =>
          agreesWithZod(schema, json, fastResponse(schema, json)),
        ),
        { numRuns: 1000 },
      );
    }
  });

  it('take the fast path for what servers and callers send', () => {
    const observation = {
      output: 'hi\n',
      exit_code: 0,
      failure_reason: '',
      expect_string: 'SHELLPS1PREFIX',
      session_type: 'bash',
    };
    expect(fastResponse(BashObservationSchema, observation)).toStrictEqual(BashObservationSchema.parse(observation));
    expect(fastResponse(IsAliveResponseSchema, { is_alive: true, message: '' })).toStrictEqual({
      is_alive: true,
      message: '',
    });
    const action = { action_type: 'bash', session: 'default', command: 'ls', timeout: 30, check: 'silent' } as const;
    expect(fastBashAction(action)).toStrictEqual(BashActionSchema.parse(action));
  });
});
