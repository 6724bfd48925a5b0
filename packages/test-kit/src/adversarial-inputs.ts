/**
 * fast-check arbitraries for the importer properties (test-only): input files of
 * every format, shaped closely enough to the real thing that the importers get past detection and into their
 * field handling, with adversarial content spliced in — deep nesting, huge strings, lone surrogates, NUL and
 * BOM characters, prototype keys (`__proto__`, `constructor`, `toString`) — and the bytes then damaged
 * (truncated, a character inserted, CRLF line ends, a BOM).
 */
import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import { INPUT_FORMATS, type InputFile, type InputFormat, type ValidationOptions } from '@rollout-fleet/producer';

/** Keys that have bitten JavaScript parsers and lookup tables. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
];

/**
 * Nesting depths: past the limit, and far enough past it (V8's JSON.stringify gives up near 100 000 levels, our
 * own recursive walkers much sooner) that any walker left unguarded overflows the stack.
 */
const deepJson = fc.oneof(fc.integer({ min: 100, max: 2_000 }), fc.integer({ min: 150_000, max: 250_000 }));
/** YAML's composer gives up near 1 000 levels; deeper only makes yaml's (iterative) parser slower. */
const deepYaml = fc.integer({ min: 100, max: 3_000 });

/** Raw JSON text (valid, or deliberately not) spliced into a serialized record where a marker stood. */
const jsonFragment = (deep: fc.Arbitrary<number>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 1, arbitrary: deep.map((n) => '['.repeat(n) + ']'.repeat(n)) },
    { weight: 1, arbitrary: deep.map((n) => '{"a":'.repeat(n) + '0' + '}'.repeat(n)) },
    { weight: 1, arbitrary: deep.map((n) => '[{"x":'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 120, max: 140 }).map((n) => '['.repeat(n) + ']'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 1 << 16, max: 3 << 19 }).map((n) => JSON.stringify('x'.repeat(n))) },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }).map((s) => JSON.stringify(s)) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '"\\u0000"',
        '"\\ud800"',
        '"a\\udc00b"',
        '"\\ufeff"',
        '"\u2028\u2029"',
        '"\\u0000\\u0000"',
        '{"__proto__": {"polluted": true}}',
        '{"constructor": {"prototype": {"polluted": true}}}',
        '{"__proto__": null}',
        '1e400',
        '-0',
        '-1e-400',
        '123456789012345678901234567890',
        '[]',
        '{}',
        'null',
        'true',
      ),
    },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  );

const MARK = '\u0001F';
const markerPattern = /"\\u0001F(\d+)\\u0001"|"\\x01F(\d+)\\x01"/g;

const text = (maxLength = 30): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.constantFrom('echo hi', 'ls -la', 'cat /etc/passwd', ''),
  );
const id = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom('django__django-11099', 'astropy__astropy-12907', 'a', 'x/y', ...PROTOTYPE_KEYS),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);
const toolName = fc.oneof(
  fc.constantFrom('execute_bash', 'str_replace_editor', 'bash', 'submit', ''),
  fc.constantFrom(...PROTOTYPE_KEYS),
  fc.string({ maxLength: 8 }),
);
/** How a list of records is laid out in a file of a format. */
type Layout = 'json-single' | 'json-list' | 'jsonl' | 'json-dict' | 'yaml';

interface FormatSpec {
  record: fc.Arbitrary<unknown>;
  layouts: readonly Layout[];
  /** Extensions of JSON files of this format (`.traj` for SWE-agent). */
  jsonExtensions: readonly string[];
}

/** The extension a file of `layout` would have; now and then a wrong one, as people do. */
function extensionFor(layout: Layout, spec: FormatSpec): fc.Arbitrary<string> {
  const right = layout === 'yaml' ? ['yaml', 'yml'] : layout === 'jsonl' ? ['jsonl', 'ndjson'] : spec.jsonExtensions;
  return fc.oneof(
    { weight: 9, arbitrary: fc.constantFrom(...right) },
    { weight: 1, arbitrary: fc.constantFrom('json', 'jsonl', 'yaml', 'traj', 'txt', '') },
  );
}

/**
 * One entry per import format; a new importer adds its record shape here and every property covers it.
 * (`Record<InputFormat, …>` makes the compiler insist on it.)
 */
function formatSpecs(plausibleWeight: number): Record<InputFormat, FormatSpec> {
  /** Values a field might hold: mostly plausible, sometimes a fragment marker, sometimes a prototype-keyed object. */
  function leaf(plausible: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: plausibleWeight, arbitrary: plausible },
      { weight: 2, arbitrary: fc.nat(7).map((k) => `${MARK}${k}\u0001`) },
      {
        weight: 1,
        arbitrary: fc.dictionary(
          fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 4 })),
          fc.oneof(fc.string({ maxLength: 8 }), fc.integer()),
          { maxKeys: 3 },
        ),
      },
      {
        weight: 1,
        arbitrary: fc.oneof(
          fc.string({ unit: 'binary', maxLength: 12 }),
          fc.integer(),
          fc.boolean(),
          fc.constant(null),
          fc.double(),
        ),
      },
    );
  }

  const args = fc.oneof(
    fc.record({ command: leaf(text()) }, { requiredKeys: [] }),
    fc.dictionary(
      fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS, 'command', 'path'), fc.string({ maxLength: 5 })),
      leaf(text()),
      { maxKeys: 3 },
    ),
    text().map((s) => JSON.stringify({ command: s })),
  );
  const extraKeys = fc.dictionary(fc.constantFrom(...PROTOTYPE_KEYS, 'trajectroy', 'extra'), leaf(text()), {
    maxKeys: 2,
  });

  function withExtras(base: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> {
    return fc.oneof(
      { weight: 16, arbitrary: base },
      {
        weight: 2,
        arbitrary: fc
          .tuple(base, extraKeys)
          .map(([b, extra]) => Object.assign(Object.create(null) as object, b, extra)),
      },
      { weight: 1, arbitrary: leaf(fc.constant({})) },
    );
  }

  const nativeRecord = withExtras(
    fc.record(
      {
        episode_id: leaf(id),
        instance_id: leaf(id),
        sample_index: leaf(fc.integer({ min: 0, max: 3 })),
        sandbox: leaf(
          fc.record(
            {
              image: leaf(fc.constantFrom('python:3.11', '')),
              env: leaf(
                fc.dictionary(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 5 })), leaf(text()), {
                  maxKeys: 3,
                }),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
        trajectory: leaf(
          fc.array(
            leaf(
              fc.record(
                { name: leaf(toolName), arguments: args, observation: leaf(text()) },
                { requiredKeys: ['name', 'arguments'] },
              ),
            ),
            { maxLength: 4 },
          ),
        ),
        eval: leaf(
          fc.record(
            { repo: leaf(id), test_command: leaf(text()), FAIL_TO_PASS: leaf(fc.array(text(), { maxLength: 2 })) },
            { requiredKeys: [] },
          ),
        ),
        metadata: leaf(
          fc.dictionary(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 5 })), leaf(text()), {
            maxKeys: 3,
          }),
        ),
        model_patch: leaf(text()),
      },
      { requiredKeys: ['instance_id'] },
    ),
  );

  const toolCall = fc.record(
    {
      id: leaf(fc.constantFrom('call_1', 'call_2', '__proto__')),
      type: fc.constant('function'),
      function: leaf(fc.record({ name: leaf(toolName), arguments: args }, { requiredKeys: [] })),
    },
    { requiredKeys: [] },
  );
  const message = withExtras(
    fc.record(
      {
        role: leaf(fc.constantFrom('system', 'user', 'assistant', 'tool')),
        content: leaf(
          fc.oneof(text(), fc.array(fc.record({ type: fc.constant('text'), text: leaf(text()) }), { maxLength: 2 })),
        ),
        tool_calls: leaf(fc.array(leaf(toolCall), { maxLength: 3 })),
        tool_call_id: leaf(fc.constantFrom('call_1', 'call_2', '__proto__')),
        tool_call_ids: leaf(fc.array(fc.constantFrom('call_1', 'call_2', 'constructor'), { maxLength: 2 })),
        agent: leaf(fc.constantFrom('main', 'primary', 'reviewer')),
        action: leaf(text()),
        is_demo: leaf(fc.boolean()),
      },
      { requiredKeys: [] },
    ),
  );

  const sweAgentTraj = withExtras(
    fc.record(
      {
        history: leaf(fc.array(message, { maxLength: 5 })),
        trajectory: leaf(
          fc.array(
            leaf(
              fc.record(
                {
                  action: leaf(text()),
                  observation: leaf(text()),
                  state: leaf(fc.oneof(text(), fc.constant('{"working_dir": "/testbed"}'))),
                },
                { requiredKeys: [] },
              ),
            ),
            { maxLength: 4 },
          ),
        ),
        info: leaf(
          fc.record(
            { submission: leaf(text()), exit_status: leaf(text()), swe_agent_version: leaf(text()) },
            { requiredKeys: [] },
          ),
        ),
        replay_config: leaf(
          fc.oneof(text(), fc.constant('{"env": {"deployment": {"image": "sweagent/swe-agent:latest"}}}')),
        ),
        environment: leaf(text()),
      },
      { requiredKeys: [] },
    ),
  );

  const conversation = fc.oneof(
    withExtras(
      fc.record(
        {
          messages: leaf(fc.array(message, { maxLength: 5 })),
          instance_id: leaf(id),
          episode_id: leaf(id),
          sample_index: leaf(fc.integer({ min: -1, max: 3 })),
          model_patch: leaf(text()),
          image_name: leaf(text()),
          info: leaf(fc.record({ submission: leaf(text()) }, { requiredKeys: [] })),
        },
        { requiredKeys: [] },
      ),
    ),
    fc.array(message, { maxLength: 5 }),
  );

  // mini-swe-agent: fenced bash actions in assistant text, or bash tool calls; `<returncode>` observations.
  const fenced = leaf(
    fc.oneof(
      text(),
      text().map((t) => `THOUGHT\n\n\`\`\`bash\n${t}\n\`\`\``),
      fc.constant('```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```'),
    ),
  );
  const miniMessage = withExtras(
    fc.record(
      {
        role: leaf(fc.constantFrom('system', 'user', 'assistant', 'tool', 'exit')),
        content: fenced,
        tool_calls: leaf(fc.array(leaf(toolCall), { maxLength: 2 })),
        tool_call_id: leaf(fc.constantFrom('call_1', 'call_2', '__proto__')),
        extra: leaf(
          fc.dictionary(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 5 })), leaf(text()), {
            maxKeys: 2,
          }),
        ),
      },
      { requiredKeys: [] },
    ),
  );
  const miniTrajectory = withExtras(
    fc.record(
      {
        trajectory_format: fc.constant('mini-swe-agent-1.1'),
        info: leaf(
          fc.record(
            {
              mini_version: leaf(text()),
              submission: leaf(text()),
              exit_status: leaf(text()),
              config: leaf(
                fc.record(
                  {
                    environment: leaf(
                      fc.record({ cwd: leaf(fc.oneof(text(), fc.constant('/testbed'))) }, { requiredKeys: [] }),
                    ),
                  },
                  { requiredKeys: [] },
                ),
              ),
            },
            { requiredKeys: [] },
          ),
        ),
        messages: leaf(fc.array(miniMessage, { maxLength: 6 })),
      },
      { requiredKeys: ['trajectory_format'] },
    ),
  );

  const testList = leaf(
    fc.oneof(
      fc.array(text(), { maxLength: 3 }),
      fc.array(text(), { maxLength: 3 }).map((l) => JSON.stringify(l)),
      text(),
    ),
  );
  const instance = withExtras(
    fc.record(
      {
        instance_id: leaf(id),
        repo: leaf(
          fc.oneof(
            fc.constantFrom('django/django', 'sympy/sympy', 'astropy/astropy'),
            fc.constantFrom(...PROTOTYPE_KEYS),
            fc.string({ maxLength: 8 }),
          ),
        ),
        base_commit: leaf(text()),
        patch: leaf(text()),
        test_patch: leaf(text()),
        FAIL_TO_PASS: testList,
        PASS_TO_PASS: testList,
        version: leaf(fc.oneof(fc.constantFrom('4.2', '3.0'), fc.double())),
        image_name: leaf(text()),
        eval_script: leaf(text()),
        test_cmd: leaf(text()),
      },
      { requiredKeys: [] },
    ),
  );

  const prediction = withExtras(
    fc.record(
      {
        instance_id: leaf(id),
        model_patch: leaf(fc.oneof(text(), fc.constant(null))),
        model_name_or_path: leaf(text()),
      },
      { requiredKeys: [] },
    ),
  );

  return {
    native: { record: nativeRecord, layouts: ['json-single', 'json-list', 'jsonl'], jsonExtensions: ['json'] },
    'swe-agent-traj': { record: sweAgentTraj, layouts: ['json-single', 'yaml'], jsonExtensions: ['traj', 'json'] },
    'mini-swe-agent': { record: miniTrajectory, layouts: ['json-single'], jsonExtensions: ['json'] },
    'openai-messages': {
      record: conversation,
      layouts: ['json-single', 'json-list', 'jsonl'],
      jsonExtensions: ['json'],
    },
    'swebench-dataset': { record: instance, layouts: ['json-single', 'json-list', 'jsonl'], jsonExtensions: ['json'] },
    'swebench-predictions': {
      record: prediction,
      layouts: ['json-single', 'json-list', 'jsonl', 'json-dict'],
      jsonExtensions: ['json'],
    },
  };
}

/** Mostly plausible records (many become episodes), and records where adversarial values are common. */
export const FORMAT_SPECS = { mild: formatSpecs(400), adversarial: formatSpecs(40) };

function serialize(records: readonly unknown[], layout: Layout): string {
  switch (layout) {
    case 'json-single':
      return JSON.stringify(records[0] ?? {}, null, 2);
    case 'json-list':
      return JSON.stringify(records);
    case 'jsonl':
      return records.map((r) => JSON.stringify(r)).join('\n');
    case 'json-dict':
      return JSON.stringify(Object.fromEntries(records.map((r, i) => [`inst-${i}`, r])));
    case 'yaml':
      return toYaml(records[0] ?? {}, { lineWidth: 0 });
  }
}

/** Replaces every marker with its fragment (markers JSON-stringify as "\u0001F3\u0001", YAML as "\x01F3\x01"). */
function splice(serialized: string, fragments: readonly string[]): string {
  return serialized.replace(
    markerPattern,
    (_m, json?: string, yaml?: string) => fragments[Number(json ?? yaml)] ?? 'null',
  );
}

/** Damage done to the serialized text; `intactWeight` against 5 for the kinds of damage. */
const damage = (intactWeight: number): fc.Arbitrary<(s: string) => string> =>
  fc.oneof(
    { weight: intactWeight, arbitrary: fc.constant((s: string) => s) },
    { weight: 1, arbitrary: fc.constant((s: string) => `\ufeff${s}`) },
    { weight: 1, arbitrary: fc.constant((s: string) => s.replaceAll('\n', '\r\n')) },
    {
      weight: 1,
      arbitrary: fc
        .double({ min: 0, max: 1, noNaN: true })
        .map((f) => (s: string) => s.slice(0, Math.floor(s.length * f))),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }))
        .map(([f, c]) => (s: string) => {
          const at = Math.floor(s.length * f);
          return s.slice(0, at) + c + s.slice(at);
        }),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 50_000 }).map((n) => (s: string) => '['.repeat(n) + s) },
  );

export type Adversity = keyof typeof FORMAT_SPECS;

/** One input file of `format`, adversarial as described above (`mild`: mostly intact, plausible records). */
export function inputFileOf(format: InputFormat, adversity: Adversity = 'adversarial'): fc.Arbitrary<InputFile> {
  const spec = FORMAT_SPECS[adversity][format];
  return fc.constantFrom(...spec.layouts).chain((layout) =>
    fc
      .record({
        records: fc.array(spec.record, { minLength: 1, maxLength: 3 }),
        fragments: fc.array(jsonFragment(layout === 'yaml' ? deepYaml : deepJson), { minLength: 8, maxLength: 8 }),
        extension: extensionFor(layout, spec),
        stem: fc.oneof(
          fc.constantFrom('django__django-11099', 'episodes', 'preds', '__proto__', 'x.y'),
          fc.string({ maxLength: 10 }),
        ),
        damage: damage(adversity === 'mild' ? 80 : 14),
      })
      .map(({ records, fragments, extension, stem, damage: damageText }) => ({
        path: `inputs/${stem}${extension === '' ? '' : `.${extension}`}`,
        text: damageText(splice(serialize(records, layout), fragments)),
      })),
  );
}

/** Any text at all under any name: what a user might pass by mistake. */
export const arbitraryFile: fc.Arbitrary<InputFile> = fc.record({
  path: fc.oneof(
    fc.constantFrom('a.json', 'a.jsonl', 'a.traj', 'a.yaml', 'a', '.json', 'dir/'),
    fc.string({ maxLength: 12 }),
  ),
  text: fc.oneof(
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.json({ maxDepth: 5 }),
    fc.jsonValue({ maxDepth: 4 }).map((v) => toYaml(v)),
  ),
});

/** `submit --policy FILE`: a valid block (JSON or YAML, bare or wrapped), one with odd values, or any text. */
const policyFile: fc.Arbitrary<InputFile> = fc.oneof(
  fc
    .record(
      {
        base_url: fc.oneof(fc.constant('http://10.0.0.5:8000/v1'), text()),
        model: fc.oneof(fc.constant('qwen-coder'), text()),
        api_key_env: fc.oneof(fc.constant('POLICY_API_KEY'), fc.constantFrom(...PROTOTYPE_KEYS)),
        sampling: fc.oneof(fc.constant({ temperature: 1, max_completion_tokens: 2048 }), fc.jsonValue({ maxDepth: 2 })),
      },
      { requiredKeys: ['base_url', 'model'] },
    )
    .chain((block) =>
      fc.constantFrom(
        { path: 'policy.json', text: JSON.stringify(block) },
        { path: 'policy.json', text: JSON.stringify({ policy: block }) },
        { path: 'policy.yaml', text: toYaml(block) },
      ),
    ),
  fc
    .integer({ min: 100, max: 3_000 })
    .map((n) => ({ path: 'policy.yaml', text: `policy:\n  sampling: ${'['.repeat(n)}${']'.repeat(n)}\n` })),
  fc.record({
    path: fc.constantFrom('policy.json', 'policy.yml', 'policy'),
    text: fc.string({ unit: 'binary', maxLength: 60 }),
  }),
);

/** Options as a caller might pass them, including wrong ones (they must become problems too). */
export const validationOptions: fc.Arbitrary<ValidationOptions> = fc.record(
  {
    runId: fc.oneof(
      { weight: 8, arbitrary: fc.constant('run-1') },
      { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
    ),
    samples: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 1, max: 3 }) },
      { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5) },
    ),
    image: fc.oneof(fc.constant('python:3.11'), fc.constant(''), fc.string({ maxLength: 8 })),
    imageTemplate: fc.oneof(
      fc.constant('img/{instance_id_1776}:latest'),
      fc.constant('{nope}'),
      fc.string({ maxLength: 8 }),
    ),
    instanceId: fc.oneof(id, fc.constant('')),
    gold: fc.boolean(),
    testCommand: text(),
    format: fc.constantFrom(...INPUT_FORMATS),
    maxEpisodeBytes: fc.constantFrom(1 << 20, 1024),
    policyFile,
  },
  { requiredKeys: ['runId'] },
);
