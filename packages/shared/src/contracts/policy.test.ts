import { describe, expect, it } from 'vitest';
import { EpisodeSchema, type EpisodeInput } from './episode.js';

const BASE: EpisodeInput = {
  run_id: 'rl-step-12',
  episode_id: 'pyutils__calc-add',
  instance_id: 'pyutils__calc-add',
  sandbox: { image: 'pyutils' },
  problem_statement: 'add(2, 3) returns -1 instead of 5.',
  eval: { repo: 'example/pyutils', test_command: 'pytest -rA' },
  policy: {
    base_url: 'http://127.0.0.1:8000/v1',
    model: 'qwen-coder',
    api_key_env: 'POLICY_API_KEY',
    sampling: { temperature: 0.7, max_completion_tokens: 512 },
  },
};

function issuesOf(input: unknown): Array<{ path: string; message: string }> {
  const parsed = EpisodeSchema.safeParse(input);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
}

describe('episode policy block', () => {
  it('applies the documented defaults: explicit sampling, limits, capture, profile', () => {
    const episode = EpisodeSchema.parse(BASE);
    expect(episode.policy).toEqual({
      base_url: 'http://127.0.0.1:8000/v1',
      model: 'qwen-coder',
      api_key_env: 'POLICY_API_KEY',
      server_kind: 'vllm',
      tool_profile: 'sweagent',
      templates: {},
      sampling: {
        temperature: 0.7,
        top_p: 1,
        top_k: -1,
        min_p: 0,
        repetition_penalty: 1,
        presence_penalty: 0,
        frequency_penalty: 0,
        max_completion_tokens: 512,
      },
      limits: {
        max_turns: 50,
        max_format_errors: 3,
        max_consecutive_timeouts: 3,
        wall_s: 1800,
        request_timeout_s: 600,
        retries: 8,
      },
      capture: { logprobs: true, top_logprobs: 0, token_ids: true },
      tool_choice: 'auto',
      extra_body: {},
    });
    expect(episode.trajectory).toEqual([]);
  });

  it('says where and why for each broken policy', () => {
    const policy = BASE.policy!;
    const cases: Array<[unknown, { path: string; message: RegExp }]> = [
      [
        { ...BASE, problem_statement: undefined },
        { path: 'problem_statement', message: /default sweagent instance template uses \{\{problem_statement\}\}/ },
      ],
      [
        { ...BASE, policy: { ...policy, templates: { instance: 'Fix {{issue}} in {{working_dir}}' } } },
        { path: 'policy.templates.instance', message: /unknown placeholder \{\{issue\}\}/ },
      ],
      [
        { ...BASE, policy: { ...policy, extra_body: { temperature: 0, chat_template_kwargs: {} } } },
        { path: 'policy.extra_body', message: /temperature is set by the policy block itself/ },
      ],
      [
        { ...BASE, policy: { ...policy, api_key_env: 'RF_POLICY_KEY' } },
        { path: 'policy.api_key_env', message: /RF_\* and VEFAAS_\* are rollout-fleet settings/ },
      ],
      [
        { ...BASE, policy: { ...policy, api_key_env: 'sk-abc123' } },
        { path: 'policy.api_key_env', message: /environment variable name/ },
      ],
      [
        { ...BASE, policy: { ...policy, base_url: 'http://h:8000/v1/chat/completions' } },
        { path: 'policy.base_url', message: /API root/ },
      ],
      [
        { ...BASE, policy: { ...policy, sampling: { max_completion_tokens: 512 } } },
        { path: 'policy.sampling.temperature', message: /number/ },
      ],
      [
        { ...BASE, policy: { ...policy, api_key: 'sk-live-123' } },
        { path: 'policy', message: /api_key/ },
      ],
      [
        { ...BASE, model_patch: 'diff --git a/x b/x' },
        { path: 'model_patch', message: /policy episode grades the patch its model produces/ },
      ],
      [
        { ...BASE, policy: { ...policy, tool_profile: 'openhands' } },
        { path: 'policy.tool_profile', message: /sweagent/ },
      ],
    ];
    for (const [input, expected] of cases) {
      const issues = issuesOf(input);
      expect(
        issues.some((issue) => issue.path === expected.path && expected.message.test(issue.message)),
        JSON.stringify(issues),
      ).toBe(true);
    }
  });

  it('accepts own templates that need no problem statement, and every profile and server kind', () => {
    for (const tool_profile of ['sweagent', 'mini_bash', 'seed'] as const) {
      for (const server_kind of ['vllm', 'sglang', 'openai'] as const) {
        const input = {
          ...BASE,
          problem_statement: undefined,
          policy: {
            ...BASE.policy!,
            tool_profile,
            server_kind,
            templates: {
              system: 'You fix bugs.',
              instance: 'Make the tests of {{repo}} pass in {{working_dir}} ({{instance_id}}).',
            },
          },
        };
        expect(issuesOf(input)).toEqual([]);
      }
    }
  });

  it('lets a policy continue a recorded trajectory', () => {
    const episode = EpisodeSchema.parse({ ...BASE, trajectory: [{ name: 'bash', arguments: { command: 'ls' } }] });
    expect(episode.trajectory).toHaveLength(1);
    expect(episode.policy?.model).toBe('qwen-coder');
  });
});
