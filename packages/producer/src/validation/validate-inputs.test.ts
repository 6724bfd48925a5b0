import { describe, expect, it } from 'vitest';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { detectFormat } from '../importers/detect-format.js';
import type { InputFile } from '../importers/types.js';
import { formatProblem, problemsToError } from './problem.js';
import { validateInputs, type ValidationOptions } from './validate-inputs.js';

const SWE_AGENT = sharedDataNeed('swe-agent');
const real = (name: string): InputFile => ({ path: name, text: readSharedData(`swe-agent/${name}`) });
const options: ValidationOptions = {
  runId: 'run-1',
  imageTemplate: 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest',
};

const nativeEpisode = (episodeId: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  episode_id: episodeId,
  instance_id: 'django__django-16255',
  trajectory: [{ name: 'execute_bash', arguments: { command: 'ls' } }],
  eval: { repo: 'django/django', test_command: './tests/runtests.py', FAIL_TO_PASS: ['test_x (m.T.test_x)'] },
  ...extra,
});

const chat = {
  instance_id: 'django__django-15781',
  messages: [
    { role: 'user', content: 'fix the issue' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'execute_bash', arguments: '{"command":"git status"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'clean' },
  ],
};

describe('detectFormat', () => {
  itWith([SWE_AGENT], 'recognises every input kind by extension and content', () => {
    const kinds = [
      real('6e44b9__sweagenttestrepo-1c2844.traj'),
      real('str_replace_anthropic_demo.yaml'),
      real('swe-bench-lite-test.json'),
      { path: 'preds.json', text: '{"a__b-1": {"model_patch": null}}' },
      { path: 'all_preds.jsonl', text: '{"instance_id": "a", "model_patch": ""}\n' },
      { path: 'chat.json', text: JSON.stringify(chat) },
      { path: 'bare.json', text: JSON.stringify(chat.messages) },
      { path: 'episodes.jsonl', text: `${JSON.stringify(nativeEpisode('e'))}\n` },
      { path: 'traj-as.json', text: readSharedData('swe-agent/function_calling_simple.traj') },
    ].map((file) => {
      const detected = detectFormat(file);
      return detected.ok ? detected.format : detected.problem.message;
    });
    expect(kinds).toEqual([
      'swe-agent-traj',
      'swe-agent-traj',
      'swebench-dataset',
      'swebench-predictions',
      'swebench-predictions',
      'openai-messages',
      'openai-messages',
      'native',
      'swe-agent-traj',
    ]);
  });
});

describe('validateInputs', () => {
  itWith([SWE_AGENT], 'imports all formats together, applies defaults and joins trajectories with the dataset', () => {
    const files: InputFile[] = [
      {
        path: 'episodes.jsonl',
        text: [nativeEpisode('native-1'), nativeEpisode('native-2', { sandbox: { image: 'own' } })]
          .map((e) => JSON.stringify(e))
          .join('\n'),
      },
      real('6e44b9__sweagenttestrepo-1c2844.traj'),
      real('function_calling_simple.traj'),
      real('str_replace_anthropic_demo.yaml'),
      { path: 'chat.json', text: JSON.stringify(chat) },
      real('swe-bench-lite-test.json'),
      {
        path: 'preds.json',
        text: JSON.stringify({ 'sympy__sympy-13031': { model_patch: 'diff', model_name_or_path: 'm' } }),
      },
    ];
    const { episodes, locations, problems } = validateInputs(files, { ...options, samples: 2 });
    expect(problems).toEqual([]);
    expect(episodes.map((e) => `${e.episode_id}#${e.sample_index}`)).toEqual([
      'native-1#0',
      'native-1#1',
      'native-2#0',
      'native-2#1',
      '6e44b9__sweagenttestrepo-1c2844#0',
      '6e44b9__sweagenttestrepo-1c2844#1',
      'function_calling_simple#0',
      'function_calling_simple#1',
      'str_replace_anthropic_demo#0',
      'str_replace_anthropic_demo#1',
      'django__django-15781#0',
      'django__django-15781#1',
      'sympy__sympy-13031#0',
      'sympy__sympy-13031#1',
    ]);
    expect(locations).toHaveLength(episodes.length);
    // Defaults applied by EpisodeSchema.
    expect(episodes[0]).toMatchObject({
      tools: ['execute_bash', 'str_replace_editor'],
      limits: { step_timeout_s: 300 },
      sandbox: { port: 8000 },
    });
    expect(episodes[2]!.sandbox.image).toBe('own');
    // The chat rollout names a dataset instance: it gets that instance's eval spec.
    const chatEpisode = episodes[10]!;
    expect(chatEpisode.eval).toMatchObject({
      repo: 'django/django',
      test_command: './tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1',
    });
    expect(chatEpisode.eval!.FAIL_TO_PASS).toHaveLength(1);
    expect(chatEpisode.sandbox.image).toBe('swebench/sweb.eval.x86_64.django_1776_django-15781:latest');
    expect(episodes[12]).toMatchObject({ model_patch: 'diff', trajectory: [], eval: { repo: 'sympy/sympy' } });
  });

  it('reports duplicates across files naming both places', () => {
    const { episodes, problems } = validateInputs(
      [
        { path: 'a.jsonl', text: `${JSON.stringify(nativeEpisode('ep'))}\n` },
        { path: 'b.json', text: JSON.stringify([nativeEpisode('other'), nativeEpisode('ep')]) },
      ],
      { ...options, image: 'img' },
    );
    expect(episodes.map((e) => e.episode_id)).toEqual(['ep', 'other']);
    expect(problems.map(formatProblem)).toEqual([
      'b.json:$[1]: episode_id: duplicate episode (run run-1, episode ep, sample 0); first at a.jsonl:1 — give one of them another episode_id or sample_index, or remove it',
    ]);
    expect(problems[0]!.code).toBe('INPUT_DUPLICATE');
  });

  it('reads a SWE-bench dataset as the harness keys it: a later record of an id wins, with a warning naming both places; identical ones merge silently', () => {
    const record = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
      instance_id: id,
      repo: 'example/pyutils',
      patch: 'diff --git a/x b/x',
      FAIL_TO_PASS: '["t1"]',
      PASS_TO_PASS: [],
      ...extra,
    });
    const jsonl = [record('a-1'), record('b-2'), record('a-1'), record('b-2', { FAIL_TO_PASS: ['t2'] })]
      .map((r) => JSON.stringify(r))
      .join('\n');
    const { episodes, problems, warnings, datasetInstanceIds } = validateInputs(
      [
        { path: 'one.jsonl', text: `${jsonl}\n` },
        // Across files too: the later file's record of c-3 is used, placed where c-3 first was; a-1 is the same
        // record as one.jsonl:1, written the same way.
        { path: 'two.json', text: JSON.stringify([record('c-3'), record('a-1')]) },
        { path: 'three.json', text: JSON.stringify([record('c-3', { patch: 'diff --git a/y b/y' })]) },
      ],
      { ...options, image: 'img', gold: true },
    );
    expect(problems).toEqual([]);
    expect(warnings.map(formatProblem)).toEqual([
      'one.jsonl:4: instance_id: instance "b-2" is also defined at one.jsonl:2, differently; this later record is used — SWE-bench keeps the last record of an instance id; remove the one you do not mean',
      'three.json:$[0]: instance_id: instance "c-3" is also defined at two.json:$[0], differently; this later record is used — SWE-bench keeps the last record of an instance id; remove the one you do not mean',
    ]);
    expect(warnings.every((w) => w.code === 'INPUT_DUPLICATE')).toBe(true);
    expect(datasetInstanceIds).toEqual(['a-1', 'b-2', 'c-3']);
    // Gold predictions: one per instance, from the record that won.
    expect(episodes.map((e) => [e.instance_id, e.model_patch, e.eval?.FAIL_TO_PASS])).toEqual([
      ['a-1', 'diff --git a/x b/x', ['t1']],
      ['b-2', 'diff --git a/x b/x', ['t2']],
      ['c-3', 'diff --git a/y b/y', ['t1']],
    ]);
  });

  it('rejects over-limit payloads: serialized size and step count', () => {
    const big = nativeEpisode('big', {
      trajectory: [{ name: 'execute_bash', arguments: { command: 'x'.repeat(2 * 1024 * 1024) } }],
    });
    const long = nativeEpisode('long', {
      trajectory: Array.from({ length: 1001 }, () => ({ name: 'execute_bash', arguments: { command: 'ls' } })),
    });
    const { episodes, problems } = validateInputs(
      [{ path: 'e.jsonl', text: [big, long, nativeEpisode('ok')].map((e) => JSON.stringify(e)).join('\n') }],
      { ...options, samples: 3 },
    );
    expect(episodes.map((e) => e.episode_id)).toEqual(['ok', 'ok', 'ok']);
    expect(problems.map((p) => [p.code, p.line, p.field])).toEqual([
      ['INPUT_TOO_LARGE', 1, undefined],
      ['INPUT_TOO_LARGE', 2, 'trajectory'],
    ]);
    expect(formatProblem(problems[0]!)).toMatch(
      /^e\.jsonl:1: episode is \d+ bytes serialized, over the limit of 1048576 — shrink the payload/,
    );
    expect(formatProblem(problems[1]!)).toBe(
      'e.jsonl:2: trajectory: 1001 steps exceed the limit of 1000 — split or shorten the trajectory, or raise the step limit (maxSteps)',
    );
    const raised = validateInputs([{ path: 'e.jsonl', text: JSON.stringify(long) }], { ...options, maxSteps: 2000 });
    expect(raised.problems).toEqual([]);
  });

  itWith([SWE_AGENT], 'reports unknown formats, empty files, JSONL named .json and bad options', () => {
    const { problems } = validateInputs(
      [
        { path: 'notes.json', text: '{"hello": "world"}' },
        { path: 'empty.jsonl', text: '\n' },
        { path: 'lines.json', text: '{"a": 1}\n{"a": 2}\n' },
      ],
      options,
    );
    expect(problems.map(formatProblem)).toEqual([
      expect.stringMatching(/^notes\.json: unknown input format — give native episodes/),
      'empty.jsonl: empty file — remove it from the inputs or fill it',
      expect.stringMatching(
        /^lines\.json:2: not valid JSON .* — this looks like JSONL \(one record per line\): name the file \*\.jsonl$/,
      ),
    ]);
    const bad = validateInputs([real('function_calling_simple.traj')], {
      runId: 'a:b',
      samples: 0,
      imageTemplate: '{oops}',
    });
    expect(bad.episodes).toEqual([]);
    expect(bad.problems.map((p) => p.field)).toEqual(['runId', 'samples', 'imageTemplate']);
    expect(bad.problems[0]!.file).toBe('(options)');
  });

  itWith([SWE_AGENT], 'keeps going after a bad file and says everything in one error for callers that throw', () => {
    const { episodes, problems } = validateInputs(
      [
        {
          path: 'bad.jsonl',
          text: '{"episode_id": "e", "instance_id": "i", "trajectory": [{"name": "execute_bash", "arguments": "ls"}]}\n',
        },
        real('function_calling_simple.traj'),
      ],
      options,
    );
    expect(episodes).toHaveLength(1);
    expect(problems.map(formatProblem)).toEqual([
      'bad.jsonl:1: trajectory[0].arguments: expected object, got string — give arguments as an object or a JSON string',
    ]);
    const error = problemsToError(problems);
    expect(error.code).toBe('INPUT_INVALID');
    expect(error.message).toContain('bad.jsonl:1: trajectory[0].arguments');
  });

  itWith([SWE_AGENT], 'adds gold episodes on request', () => {
    const { episodes, problems } = validateInputs([real('swe-bench-lite-test.json')], { ...options, gold: true });
    expect(problems).toEqual([]);
    expect(episodes.map((e) => e.instance_id)).toEqual([
      'django__django-16255',
      'sympy__sympy-13031',
      'pytest-dev__pytest-11143',
      'scikit-learn__scikit-learn-13584',
      'django__django-15781',
    ]);
    expect(episodes.every((e) => typeof e.model_patch === 'string' && e.model_patch.startsWith('diff --git'))).toBe(
      true,
    );
  });
});

describe('validateInputs: an eval that lists no test', () => {
  it('is refused at its record with the reason, field eval.FAIL_TO_PASS (every patch would resolve)', () => {
    const text = [
      JSON.stringify(nativeEpisode('ok')),
      JSON.stringify(nativeEpisode('no-tests', { eval: { repo: 'django/django', test_command: 'x' } })),
    ].join('\n');
    const { problems } = validateInputs([{ path: 'eps.jsonl', text }], options);
    expect(problems).toEqual([
      expect.objectContaining({ file: 'eps.jsonl', line: 2, field: 'eval.FAIL_TO_PASS', code: 'INPUT_INVALID' }),
    ]);
    expect(problems[0]?.message).toContain('both empty');
  });
});

describe('validateInputs: unknown keys', () => {
  it('rejects a misspelt field instead of dropping it, naming the line and the key', () => {
    const text = `${JSON.stringify({ episode_id: 'e1', instance_id: 'i1', sandbox: { image: 'x', imgae: 'y' }, trajectroy: [] })}\n`;
    const { episodes, problems } = validateInputs([{ path: 'eps.jsonl', text }], { runId: 'r' });
    expect(episodes).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      expect.stringMatching(/^eps\.jsonl:1: sandbox: Unrecognized key: "imgae"/),
      expect.stringMatching(/^eps\.jsonl:1: .*Unrecognized key: "trajectroy"/),
    ]);
  });

  it('says which field a misspelt key meant, at any depth (episode, sandbox, eval, a trajectory step)', () => {
    const record = nativeEpisode('e1', {
      sandbox: { image: 'x', imgae: 'y' },
      eval: { repo: 'django/django', test_command: 'pytest', FAIL_TO_PAS: [] },
      trajectory: [{ name: 'execute_bash', arguments: { command: 'ls' }, argumnets: {} }],
      problem_statment: 'fix it',
      zzz_unrelated: 1,
    });
    const { problems } = validateInputs([{ path: 'eps.jsonl', text: `${JSON.stringify(record)}\n` }], { runId: 'r' });
    const lines = problems.map(formatProblem);
    expect(lines).toEqual(
      expect.arrayContaining([
        'eps.jsonl:1: sandbox: Unrecognized key: "imgae" — did you mean "image" (not "imgae")?',
        'eps.jsonl:1: eval: Unrecognized key: "FAIL_TO_PAS" — did you mean "FAIL_TO_PASS" (not "FAIL_TO_PAS")?',
        'eps.jsonl:1: trajectory[0]: Unrecognized key: "argumnets" — did you mean "arguments" (not "argumnets")?',
      ]),
    );
    const top = lines.find((line) => line.includes('problem_statment')) ?? '';
    expect(top).toContain('did you mean "problem_statement" (not "problem_statment")');
    expect(top).not.toContain('zzz_unrelated" (not');
  });
});

describe('validateInputs: misspelt tool names', () => {
  const withCalls = (names: string[], extra: Record<string, unknown> = {}): InputFile => ({
    path: 'eps.jsonl',
    text: `${JSON.stringify(nativeEpisode('e1', { trajectory: names.map((name) => ({ name, arguments: { command: 'ls' } })), ...extra }))}\n`,
  });

  it('refuses a tool name one or two edits from a tool of the episode, with the name it meant', () => {
    const { episodes, problems } = validateInputs(
      [withCalls(['execute_bash', 'exeute_bash', 'str_replace_edtor', 'bsh'])],
      options,
    );
    expect(episodes).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      'eps.jsonl:1: trajectory[1].name: unknown tool "exeute_bash" — did you mean "execute_bash"? (tools: bash, execute_bash, str_replace_editor)',
      'eps.jsonl:1: trajectory[2].name: unknown tool "str_replace_edtor" — did you mean "str_replace_editor"? (tools: bash, execute_bash, str_replace_editor)',
      'eps.jsonl:1: trajectory[3].name: unknown tool "bsh" — did you mean "bash"? (tools: bash, execute_bash, str_replace_editor)',
    ]);
  });

  it("keeps names far from every tool (a model may call them; they replay as error observations) and other bundles' commands", () => {
    expect(validateInputs([withCalls(['open_file', 'sh', 'find_file'])], options).problems).toEqual([]);
    const bundle = { name: 'swe-agent', version: '1.0', bundles: ['windowed', 'search', 'submit'] };
    expect(validateInputs([withCalls(['open', 'goto', 'bsh'], { tool_bundle: bundle })], options).problems).toEqual([]);
  });
});
