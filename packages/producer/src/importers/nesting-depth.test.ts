/**
 * Deep nesting used to end `submit` with "Maximum call stack size exceeded": JSON.stringify of an accepted
 * episode, format detection, the syntax-error locator and the YAML composer all recurse. Each entry point now
 * stops at MAX_NESTING_DEPTH with a located problem; these cases are the ones that crashed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateInputs } from '../validation/validate-inputs.js';
import { jsonErrorOffset } from './json-error-offset.js';
import { parseJsonText } from './json-source.js';
import { jsonNestingOverflow, MAX_NESTING_DEPTH, yamlNestingOverflow } from './nesting-depth.js';

const FAR = 200_000;
const nested = (depth: number, inner = '1'): string => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
const options = { runId: 'run-1', image: 'python:3.11' };
const episodeLine = (args: string): string =>
  `{"instance_id": "django__django-11099", "trajectory": [{"name": "execute_bash", "arguments": ${args}}]}`;

function onlyProblem(path: string, text: string): ReturnType<typeof validateInputs>['problems'][number] {
  const result = validateInputs([{ path, text }], options);
  expect(result.episodes).toEqual([]);
  expect(result.problems).toHaveLength(1);
  return result.problems[0]!;
}

describe('nesting depth', () => {
  it('accepts exactly the limit and refuses one level more, on the line where it happens', () => {
    expect(jsonNestingOverflow('['.repeat(MAX_NESTING_DEPTH) + ']'.repeat(MAX_NESTING_DEPTH))).toBeUndefined();
    expect(jsonNestingOverflow('['.repeat(MAX_NESTING_DEPTH + 1) + ']'.repeat(MAX_NESTING_DEPTH + 1))).toBe(
      MAX_NESTING_DEPTH,
    );
    // Brackets in strings (escaped quotes included) are text, not nesting.
    expect(jsonNestingOverflow(`["${'[{'.repeat(500)}\\"${'['.repeat(500)}"]`)).toBeUndefined();
    expect(parseJsonText(`{\n"a":\n${'['.repeat(200)}${']'.repeat(200)}}`)).toEqual({
      ok: false,
      reason: 'depth',
      message: 'nested deeper than 128 levels',
      line: 3,
    });
  });

  it('a file of deep JSON is a located problem, valid or not (format detection and the syntax locator recursed)', () => {
    expect(onlyProblem('deep.json', '['.repeat(FAR) + ']'.repeat(FAR))).toMatchObject({
      file: 'deep.json',
      line: 1,
      message: 'too deeply nested (nested deeper than 128 levels)',
    });
    expect(onlyProblem('open.json', '['.repeat(FAR))).toMatchObject({
      file: 'open.json',
      line: 1,
      message: expect.stringMatching(/^not valid JSON/),
    });
    expect(jsonErrorOffset('[' + '{"a":['.repeat(FAR))).toBe(1 + 6 * FAR);
  });

  it('deep values inside an otherwise valid record are refused, in every importer that reads them (JSON.stringify recursed)', () => {
    const twoLines = validateInputs(
      [{ path: 'e.jsonl', text: `${episodeLine('{}')}\n${episodeLine(nested(FAR))}\n` }],
      options,
    );
    expect(twoLines.problems).toMatchObject([{ line: 2, message: expect.stringMatching(/too deeply nested/) }]);
    // Arguments recorded as a JSON string: too deep to read, kept as the raw text (replay reports it like any malformed arguments).
    const asString = validateInputs([{ path: 'e.jsonl', text: episodeLine(JSON.stringify(nested(FAR))) }], options);
    expect(asString.problems).toEqual([
      {
        file: 'e.jsonl',
        line: 1,
        field: 'trajectory[0].arguments',
        message: 'expected object, got string',
        hint: expect.any(String),
        code: 'INPUT_INVALID',
      },
    ]);
    const openai = JSON.stringify({
      messages: [
        {
          role: 'assistant',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: nested(50_000) } }],
        },
      ],
    });
    const fromOpenAi = validateInputs([{ path: 'chat.json', text: openai }], options);
    expect(fromOpenAi.problems).toEqual([]);
    expect(fromOpenAi.episodes[0]!.trajectory[0]!.arguments).toEqual({ __raw: nested(50_000) });
  });

  it('deep YAML (flow and block) is refused before the composer runs', () => {
    const flow = `history: ${'['.repeat(FAR)}${']'.repeat(FAR)}\n`;
    expect(yamlNestingOverflow(flow)).toBe(9 + MAX_NESTING_DEPTH - 1);
    expect(onlyProblem('demo.yaml', flow)).toMatchObject({
      line: 1,
      message: 'too deeply nested (nested deeper than 128 levels)',
    });
    const block = [
      'history:',
      ...Array.from({ length: 3_000 }, (_u, i) => `${' '.repeat(i + 2)}- `),
      `${' '.repeat(3_002)}x`,
    ].join('\n');
    expect(onlyProblem('demo.yml', block)).toMatchObject({ line: MAX_NESTING_DEPTH + 1 });
    // The policy file (`submit --policy`) is read by the same YAML reader.
    const policy = validateInputs([{ path: 'e.jsonl', text: episodeLine('{}') }], {
      ...options,
      policyFile: { path: 'policy.yaml', text: block },
    });
    expect(policy.problems).toMatchObject([
      {
        file: 'policy.yaml',
        line: MAX_NESTING_DEPTH + 1,
        message: 'too deeply nested (nested deeper than 128 levels)',
      },
    ]);
    expect(yamlNestingOverflow('a: {b: [[1]]}', 4)).toBeUndefined();
    expect(yamlNestingOverflow('a: {b: [[1]]}', 3)).toBe(8);
  });

  it('any nesting of arrays and objects, at any depth, parses or is refused without throwing', () => {
    const shape = fc.array(fc.constantFrom('[', '{"k":', '[1,', '{"a":1,"b":'), { minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(shape, fc.integer({ min: 1, max: 6_000 }), fc.boolean(), (openers, repeat, close) => {
        const opening = Array.from({ length: repeat }, (_u, i) => openers[i % openers.length]!).join('');
        const closing = opening
          .replace(/[^[{]/g, '')
          .split('')
          .reverse()
          .map((c) => (c === '[' ? ']' : '}'))
          .join('');
        const text = opening + '0' + (close ? closing : '');
        const parsed = parseJsonText(text);
        const depth = closing.length;
        if (parsed.ok) expect(close && depth <= MAX_NESTING_DEPTH).toBe(true);
        else expect(parsed.reason).toBe(close ? 'depth' : 'syntax');
        expect(() => validateInputs([{ path: 'x.json', text }], options)).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });
});
