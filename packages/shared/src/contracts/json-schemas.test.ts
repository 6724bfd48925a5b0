import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EpisodeSchema } from './episode.js';
import { renderJsonSchemas } from './json-schemas.js';
import { EpisodeResultSchema } from './result.js';

const SCHEMAS_DIR = new URL('../../../../schemas/', import.meta.url);

type JsonSchema = {
  type?: string | string[];
  required?: string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
};

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * The essentials of JSON Schema validation (type, required, properties, items, enum, anyOf):
 * enough to show a Python-side validator sees the same shape zod does, without a validator dependency.
 */
function shapeProblems(schema: JsonSchema, value: unknown, path = '$'): string[] {
  const actual = jsonType(value);
  const allowed = schema.type === undefined ? undefined : [schema.type].flat();
  if (allowed !== undefined && !allowed.includes(actual) && !(actual === 'integer' && allowed.includes('number'))) {
    return [`${path}: ${actual} is not ${allowed.join('|')}`];
  }
  const problems: string[] = [];
  if (schema.enum !== undefined && !schema.enum.includes(value))
    problems.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (schema.anyOf !== undefined && !schema.anyOf.some((option) => shapeProblems(option, value, path).length === 0)) {
    problems.push(`${path}: matches no anyOf branch`);
  }
  if (actual === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!(key in record)) problems.push(`${path}.${key}: required`);
    for (const [key, item] of Object.entries(record)) {
      const sub =
        schema.properties?.[key] ??
        (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (sub !== undefined) problems.push(...shapeProblems(sub, item, `${path}.${key}`));
    }
  }
  if (actual === 'array' && schema.items !== undefined) {
    const items = schema.items;
    (value as unknown[]).forEach((item, index) => problems.push(...shapeProblems(items, item, `${path}[${index}]`)));
  }
  return problems;
}

/** Shaped like what the importers produce from SWE-bench Lite's pytest-dev__pytest-11143 and a short tool-call trajectory. */
const EPISODE = {
  run_id: 'run-2026-07-20/qwen-swe',
  episode_id: 'pytest-dev__pytest-11143.s0',
  instance_id: 'pytest-dev__pytest-11143',
  sandbox: {
    image: 'swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-11143',
    env: { HOME: '/root', PIP_PROGRESS_BAR: 'off' },
  },
  trajectory: [
    {
      id: 'call_01',
      name: 'execute_bash',
      arguments: { command: 'grep -n "isinstance(item.value.value, str)" src/_pytest/assertion/rewrite.py' },
    },
    {
      id: 'call_02',
      name: 'str_replace_editor',
      arguments: {
        command: 'str_replace',
        path: '/testbed/src/_pytest/assertion/rewrite.py',
        old_str: '                and isinstance(item.value, ast.Constant)\n',
        new_str:
          '                and isinstance(item.value, ast.Constant)\n                and isinstance(item.value.value, str)\n',
      },
      observation: 'The file /testbed/src/_pytest/assertion/rewrite.py has been edited.',
    },
  ],
  eval: {
    repo: 'pytest-dev/pytest',
    base_commit: '6995257cf470d2143ad1683824962de4071c0eb7',
    test_patch: 'diff --git a/testing/test_assertrewrite.py b/testing/test_assertrewrite.py\n',
    FAIL_TO_PASS: ['testing/test_assertrewrite.py::TestIssue11140::test_constant_not_picked_as_module_docstring'],
    PASS_TO_PASS: ['testing/test_assertrewrite.py::TestAssertionPass::test_hook_call'],
    test_command: 'pytest -rA',
  },
  metadata: { source: 'swe-bench-lite', model: 'qwen-swe' },
};

/**
 * Every property anywhere in a JSON Schema document (under properties, items, additionalProperties, anyOf/oneOf/allOf,
 * $defs) that carries no `description`, as JSON paths.
 */
function undescribedProperties(node: unknown, path = '$'): string[] {
  if (Array.isArray(node)) return node.flatMap((item, index) => undescribedProperties(item, `${path}[${index}]`));
  if (typeof node !== 'object' || node === null) return [];
  const missing: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      for (const [name, property] of Object.entries(value as Record<string, unknown>)) {
        const described =
          typeof property === 'object' &&
          property !== null &&
          typeof (property as { description?: unknown }).description === 'string' &&
          (property as { description: string }).description.trim() !== '';
        if (!described) missing.push(`${path}.properties.${name}`);
        missing.push(...undescribedProperties(property, `${path}.properties.${name}`));
      }
    } else if (key !== 'default' && key !== 'examples' && key !== 'const' && key !== 'enum') {
      missing.push(...undescribedProperties(value, `${path}.${key}`));
    }
  }
  return missing;
}

describe('generated JSON Schemas', () => {
  const rendered = renderJsonSchemas();

  it.each(Object.keys(rendered) as (keyof typeof rendered)[])(
    'schemas/%s is current (regenerate: npm run schemas)',
    (name) => {
      const committed = readFileSync(new URL(name, SCHEMAS_DIR), 'utf8');
      expect(committed).toBe(rendered[name]);
      expect(committed.endsWith('}\n')).toBe(true);
    },
  );

  it('finds an undescribed property wherever it is nested', () => {
    const schema = {
      properties: {
        a: { description: 'ok', type: 'object', properties: { b: { type: 'string' } } },
        c: { anyOf: [{ properties: { d: { description: ' ' } } }] },
      },
    };
    expect(undescribedProperties(schema)).toEqual([
      '$.properties.a.properties.b',
      '$.properties.c',
      '$.properties.c.anyOf[0].properties.d',
    ]);
  });

  const committedFiles = readdirSync(SCHEMAS_DIR).filter((name) => name.endsWith('.json'));
  it.each(committedFiles)(
    'schemas/%s has a description for every property (add .describe() in the zod contract)',
    (name) => {
      expect(committedFiles.length).toBeGreaterThan(0);
      const schema: unknown = JSON.parse(readFileSync(new URL(name, SCHEMAS_DIR), 'utf8'));
      expect(undescribedProperties(schema)).toEqual([]);
    },
  );

  it('describes the input form of an episode: defaults optional, essentials required', () => {
    const schema = JSON.parse(rendered['episode.schema.json']) as JsonSchema;
    expect(schema.required).toEqual(['run_id', 'episode_id', 'instance_id', 'sandbox']);
    expect(schema.properties?.sandbox?.required).toEqual(['image']);
    expect(schema.properties?.eval?.required).toEqual(['repo']);
  });

  it('accepts a real-looking episode in zod and in the JSON Schema alike', () => {
    const parsed = EpisodeSchema.parse(EPISODE);
    expect(parsed.limits).toEqual({ step_timeout_s: 300, episode_deadline_s: 3600 });
    expect(parsed.sandbox.port).toBe(8000);
    const schema = JSON.parse(rendered['episode.schema.json']) as JsonSchema;
    expect(shapeProblems(schema, EPISODE)).toEqual([]);
  });

  it('accepts a policy episode in zod and in the JSON Schema alike, and refuses a key where the key name belongs', () => {
    const policyEpisode = {
      ...EPISODE,
      trajectory: [],
      problem_statement: 'Rewrite the assertion message of pytest when the first statement is a number.',
      policy: {
        base_url: 'http://10.0.0.5:8000/v1',
        model: 'qwen',
        api_key_env: 'POLICY_API_KEY',
        sampling: { temperature: 1, max_completion_tokens: 1024 },
      },
    };
    expect(EpisodeSchema.safeParse(policyEpisode).success).toBe(true);
    const schema = JSON.parse(rendered['episode.schema.json']) as JsonSchema;
    expect(shapeProblems(schema, policyEpisode)).toEqual([]);
    expect(schema.properties?.policy?.required).toEqual(['base_url', 'model', 'sampling']);
    expect(schema.properties?.policy?.additionalProperties).toBe(false);
  });

  it('rejects the same broken episodes in zod and in the JSON Schema', () => {
    const schema = JSON.parse(rendered['episode.schema.json']) as JsonSchema;
    const noImage = { ...EPISODE, sandbox: { env: {} } };
    const noTestCommand = { ...EPISODE, eval: { repo: 'pytest-dev/pytest' } };
    const badTool = { ...EPISODE, tools: ['rm_rf'] };
    for (const broken of [noImage, noTestCommand, badTool]) {
      expect(EpisodeSchema.safeParse(broken).success).toBe(false);
      expect(shapeProblems(schema, broken)).not.toEqual([]);
    }
  });

  it('describes results with every field required (but the policy-only ones, group membership, replay fidelity, artifacts and the integrity flag old results lack), and accepts a written result', () => {
    const schema = JSON.parse(rendered['episode-result.schema.json']) as JsonSchema;
    const optional = [
      'grading',
      'integrity',
      'exit_status',
      'turns',
      'tokens',
      'messages',
      'policy',
      'artifacts',
      'group',
      'fidelity',
    ];
    expect(schema.required).toEqual(Object.keys(EpisodeResultSchema.shape).filter((key) => !optional.includes(key)));
    const result = EpisodeResultSchema.parse({
      run_id: EPISODE.run_id,
      episode_id: EPISODE.episode_id,
      instance_id: EPISODE.instance_id,
      sample_index: 0,
      status: 'failed',
      resolved: null,
      reward: null,
      steps: [],
      patch: null,
      report: null,
      timings: { queue_wait_ms: 12, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 30_012 },
      attempts: [
        {
          attempt: 1,
          worker_id: 'w-1',
          sandbox_id: null,
          started_at: '2026-07-20T10:00:00Z',
          ended_at: '2026-07-20T10:00:30Z',
          failure: { code: 'SANDBOX_START_TIMEOUT', class: 'infra', message: 'not alive after 180 s' },
        },
      ],
      failure: { code: 'SANDBOX_START_TIMEOUT', class: 'infra', message: 'not alive after 180 s' },
      worker_id: 'w-1',
      sandbox_id: null,
      finished_at: '2026-07-20T10:00:30Z',
    });
    expect(shapeProblems(schema, result)).toEqual([]);
    expect(shapeProblems(schema, { ...result, status: 'lost', resolved: 'yes' })).toEqual([
      '$.status: "lost" not in enum',
      '$.resolved: string is not boolean|null',
    ]);
  });
});
