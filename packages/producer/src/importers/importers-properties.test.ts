/**
 * Importers cannot crash: for every import format, arbitrary and adversarial files (see packages/test-kit/src/adversarial-inputs.ts)
 * end in located problems or valid episodes — never an exception, never a polluted prototype, never output that
 * grows faster than the input.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { EpisodeSchema } from '@rollout-fleet/shared';
import {
  arbitraryFile,
  FORMAT_SPECS,
  inputFileOf,
  validationOptions,
  type Adversity,
} from '@rollout-fleet/test-kit/adversarial-inputs';
import { validateInputs, type ValidationOptions } from '../validation/validate-inputs.js';
import type { Problem } from '../validation/problem.js';
import { detectFormat, INPUT_FORMATS, type InputFormat } from './detect-format.js';
import type { InputFile } from './types.js';

const PROBLEM_CODES = ['INPUT_INVALID', 'INPUT_DUPLICATE', 'INPUT_TOO_LARGE'];
const OPTIONS_FILE = '(options)';
/** Problem messages and fields are clipped to 400 characters plus a short "… (N more characters)". */
const MAX_PROBLEM_TEXT = 450;

function lineCount(text: string): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

function assertLocated(problem: Problem, files: readonly InputFile[]): void {
  const file = files.find((f) => f.path === problem.file);
  expect(file !== undefined || problem.file === OPTIONS_FILE, `problem names an input: ${problem.file}`).toBe(true);
  expect(PROBLEM_CODES).toContain(problem.code);
  expect(
    typeof problem.message === 'string' && problem.message.length > 0 && problem.message.length <= MAX_PROBLEM_TEXT,
  ).toBe(true);
  expect(typeof problem.hint === 'string' && problem.hint.length > 0).toBe(true);
  if (problem.field !== undefined) expect(problem.field.length).toBeLessThanOrEqual(MAX_PROBLEM_TEXT);
  if (problem.line !== undefined && file !== undefined) {
    expect(Number.isInteger(problem.line) && problem.line >= 1 && problem.line <= lineCount(file.text)).toBe(true);
  }
}

/** The contract of validateInputs for any input: it returns, and what it returns is either located problems or valid episodes. */
function assertOutcome(files: readonly InputFile[], options: ValidationOptions): void {
  const result = validateInputs(files, options);
  // The policy file is an input too: its problems name it.
  const inputs = options.policyFile === undefined ? files : [...files, options.policyFile];
  for (const problem of result.problems) assertLocated(problem, inputs);
  expect(result.locations).toHaveLength(result.episodes.length);
  for (const [index, episode] of result.episodes.entries()) {
    expect(EpisodeSchema.safeParse(episode).success).toBe(true);
    // What is enqueued is JSON: an accepted episode survives the trip through Redis unchanged.
    expect(JSON.parse(JSON.stringify(episode))).toEqual(episode);
    expect(files.map((f) => f.path)).toContain(result.locations[index]!.file);
  }
  if (result.problems.length === 0 && files.length > 0) expect(result.episodes.length).toBeGreaterThan(0);
  // Output is bounded by the input: problems quote at most a clipped excerpt, episodes hold what the files held.
  const inputChars = files.reduce((sum, f) => sum + f.text.length, 0);
  const problemChars = JSON.stringify(result.problems).length;
  expect(problemChars).toBeLessThanOrEqual(
    4 * inputChars + 2_000 * (1 + lineCount(files.map((f) => f.text).join('\n'))),
  );
}

const pristinePrototype = Object.getOwnPropertyNames(Object.prototype).sort();

afterEach(() => {
  // Nothing the importers read may have reached the shared prototypes.
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(pristinePrototype);
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  expect(Object.getOwnPropertyNames(Array.prototype)).not.toContain('polluted');
});

const RUNS = { numRuns: 100 };

describe('importers never throw, whatever the input', () => {
  const cases = INPUT_FORMATS.flatMap((format) =>
    (['mild', 'adversarial'] as const).map((adversity) => ({ format, adversity })),
  );
  it.each(cases)(
    '$format files ($adversity): located problems or valid episodes',
    ({ format, adversity }: { format: InputFormat; adversity: Adversity }) => {
      fc.assert(
        fc.property(inputFileOf(format, adversity), validationOptions, (file, options) => {
          // As detected (options.format unset) and forced through this format's importer.
          const { format: _forced, ...detected } = options;
          assertOutcome([file], detected);
          assertOutcome([file], { ...options, format });
        }),
        RUNS,
      );
    },
  );

  it('files of every format together (datasets join predictions and trajectories, duplicates across files)', () => {
    const anyFile = fc
      .tuple(fc.constantFrom(...INPUT_FORMATS), fc.constantFrom<Adversity>('mild', 'adversarial'))
      .chain(([format, adversity]) => inputFileOf(format, adversity));
    fc.assert(
      fc.property(fc.array(anyFile, { minLength: 2, maxLength: 4 }), validationOptions, (generated, options) => {
        // Distinct paths, so that a problem's file:line names one file.
        const files = generated.map((file, index) => ({
          ...file,
          path: file.path.replace(/^inputs\//, `inputs/${index}/`),
        }));
        const { format: _forced, ...detected } = options;
        assertOutcome(files, detected);
      }),
      RUNS,
    );
  });

  it('any text under any name, through detection and through every importer', () => {
    fc.assert(
      fc.property(arbitraryFile, fc.option(fc.constantFrom(...INPUT_FORMATS), { nil: undefined }), (file, format) => {
        const detected = detectFormat(file);
        if (!detected.ok) assertLocated(detected.problem, [file]);
        assertOutcome(
          [file],
          format === undefined
            ? { runId: 'run-1', image: 'python:3.11' }
            : { runId: 'run-1', image: 'python:3.11', format },
        );
      }),
      { numRuns: 300 },
    );
  });

  it('every format has a generator', () => {
    expect(Object.keys(FORMAT_SPECS.adversarial).sort()).toEqual([...INPUT_FORMATS].sort());
  });
});
