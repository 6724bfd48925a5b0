/**
 * `submit --policy FILE`: one policy block for a whole submission. A SWE-bench dataset becomes N policy episodes
 * per instance; other episodes get the block; mistakes are reported once, where they are.
 */
import { beforeAll, expect, it } from 'vitest';
import { describeWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import type { InputFile } from '../importers/types.js';
import { formatProblem } from './problem.js';
import { validateInputs, type ValidationOptions } from './validate-inputs.js';

const DATASET_FILE = 'swe-agent/swe-bench-lite-test.json';
let DATASET: InputFile;
let INSTANCES: Array<{ instance_id: string; problem_statement: string }>;
const options: ValidationOptions = {
  runId: 'rl-step-3',
  imageTemplate: 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest',
};

const POLICY = {
  base_url: 'http://10.0.0.5:8000/v1',
  model: 'qwen-coder',
  api_key_env: 'POLICY_API_KEY',
  sampling: { temperature: 1, max_completion_tokens: 2048 },
  limits: { max_turns: 30 },
};
const policyFile = (block: unknown = POLICY, path = 'policy.json'): InputFile => ({
  path,
  text: JSON.stringify(block),
});

describeWith([sharedDataNeed(DATASET_FILE)], 'validateInputs with a policy file', () => {
  beforeAll(() => {
    DATASET = { path: 'swe-bench-lite-test.json', text: readSharedData(DATASET_FILE) };
    INSTANCES = JSON.parse(DATASET.text) as Array<{ instance_id: string; problem_statement: string }>;
  });

  it('turns every dataset instance into N policy episodes with its problem statement, eval spec and image', () => {
    const result = validateInputs([DATASET], { ...options, samples: 3, policyFile: policyFile() });
    expect(result.problems).toEqual([]);
    expect(result.episodes).toHaveLength(INSTANCES.length * 3);
    const first = result.episodes.filter((e) => e.instance_id === 'django__django-16255');
    expect(first.map((e) => e.sample_index)).toEqual([0, 1, 2]);
    for (const episode of first) {
      expect(episode).toMatchObject({
        run_id: 'rl-step-3',
        episode_id: 'django__django-16255',
        trajectory: [],
        problem_statement: INSTANCES[0]!.problem_statement,
        sandbox: { image: 'swebench/sweb.eval.x86_64.django_1776_django-16255:latest' },
        eval: { repo: 'django/django' },
        policy: { model: 'qwen-coder', tool_profile: 'sweagent', limits: { max_turns: 30, max_format_errors: 3 } },
      });
      expect(episode.model_patch).toBeUndefined();
    }
  });

  it('reads a YAML policy file, and the {"policy": {...}} wrapper', () => {
    const yaml =
      'base_url: http://10.0.0.5:8000/v1\nmodel: qwen\nsampling:\n  temperature: 0.6\n  max_completion_tokens: 512\ntool_profile: mini_bash\n';
    const fromYaml = validateInputs([DATASET], { ...options, policyFile: { path: 'policy.yaml', text: yaml } });
    expect(fromYaml.problems).toEqual([]);
    expect(fromYaml.episodes[0]!.policy).toMatchObject({ model: 'qwen', tool_profile: 'mini_bash' });
    const wrapped = validateInputs([DATASET], { ...options, policyFile: policyFile({ policy: POLICY }) });
    expect(wrapped.problems).toEqual([]);
  });

  it("gives other episodes the block (a record's own wins) and continues imported trajectories with the dataset's problem statement", () => {
    const chat = {
      instance_id: 'django__django-15781',
      messages: [
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"git status"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'clean' },
      ],
    };
    const own = { ...POLICY, model: 'other-model' };
    const native = {
      episode_id: 'native-1',
      instance_id: 'local-task',
      sandbox: { image: 'pyutils' },
      problem_statement: 'fix add',
      policy: own,
      eval: {
        repo: 'example/pyutils',
        test_command: 'python3 -m unittest -v',
        FAIL_TO_PASS: ['test_add (tests.test_basic.TestCalcAdd.test_add)'],
      },
    };
    const result = validateInputs(
      [
        DATASET,
        { path: 'chat.json', text: JSON.stringify(chat) },
        { path: 'native.json', text: JSON.stringify(native) },
      ],
      { ...options, policyFile: policyFile() },
    );
    expect(result.problems).toEqual([]);
    const byInstance = new Map(result.episodes.map((e) => [e.instance_id, e]));
    // One episode per instance: the trajectory's instance is not also made a fresh policy episode.
    expect(result.episodes.filter((e) => e.instance_id === 'django__django-15781')).toHaveLength(1);
    expect(byInstance.get('django__django-15781')).toMatchObject({
      trajectory: [{ name: 'bash', arguments: { command: 'git status' } }],
      problem_statement: INSTANCES.find((i) => i.instance_id === 'django__django-15781')!.problem_statement,
      policy: { model: 'qwen-coder' },
    });
    expect(byInstance.get('local-task')!.policy!.model).toBe('other-model');
    expect(result.episodes).toHaveLength(INSTANCES.length + 1);
  });

  it('reports a broken policy file once, at the file, field by field, and enqueues nothing', () => {
    const broken = {
      ...POLICY,
      api_key: 'sk-live-0123',
      sampling: { max_completion_tokens: 'lots' },
      extra_body: { temperature: 0 },
    };
    const result = validateInputs([DATASET], { ...options, policyFile: policyFile(broken) });
    expect(result.episodes).toEqual([]);
    const lines = result.problems.map(formatProblem);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^policy\.json: policy\.sampling\.temperature: missing/),
        expect.stringMatching(/^policy\.json: policy\.sampling\.max_completion_tokens: .*number/),
        expect.stringMatching(/^policy\.json: policy\.extra_body: temperature is set by the policy block itself/),
        expect.stringMatching(/^policy\.json: policy: .*api_key.* — remove it/),
      ]),
    );
    expect(lines.join('\n')).not.toContain('sk-live-0123');
    const yaml = validateInputs([DATASET], {
      ...options,
      policyFile: { path: 'p.yaml', text: 'model: x\nsampling: [\n' },
    });
    expect(yaml.problems[0]).toMatchObject({ file: 'p.yaml', message: expect.stringContaining('not valid YAML') });
  });

  it('refuses predictions, gold and records without a problem statement under a policy, saying where', () => {
    const preds = {
      path: 'preds.json',
      text: JSON.stringify({ 'django__django-16255': { model_patch: 'diff --git a/x b/x' } }),
    };
    const mixed = validateInputs([DATASET, preds], { ...options, policyFile: policyFile() });
    expect(mixed.problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        /^preds\.json:\$\["django__django-16255"\]: model_patch: this record grades a given patch; --policy lets the model write one/,
      ),
    ]);

    const gold = validateInputs([DATASET], { ...options, gold: true, policyFile: policyFile() });
    expect(gold.problems.map((p) => p.field)).toEqual(['gold']);

    const native = {
      episode_id: 'n',
      instance_id: 'local-task',
      sandbox: { image: 'pyutils' },
      eval: { repo: 'example/pyutils', test_command: 'true', FAIL_TO_PASS: ['t'] },
    };
    const noStatement = validateInputs([{ path: 'native.jsonl', text: `${JSON.stringify(native)}\n` }], {
      ...options,
      policyFile: policyFile(),
    });
    expect(noStatement.problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        /^native\.jsonl:1: problem_statement: the default sweagent instance template uses \{\{problem_statement\}\}/,
      ),
    ]);
  });
});
