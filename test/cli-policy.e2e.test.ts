/**
 * `rollout-fleet submit --policy FILE` and `results --format openai|training` as a user runs them (child
 * processes): a SWE-bench dataset becomes N policy episodes per instance; a broken policy file is refused with
 * exit 3, a message naming the file and field, nothing enqueued, and no secret echoed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { sharedDataNeed, sharedDataPath } from '@rollout-fleet/test-kit/shared-data';
import { configOf, openPipeline, runCli, testEnv, type Pipeline } from './support/pipeline-harness.js';

const DATASET_FILE = 'swe-agent/swe-bench-lite-test.json';
const DATASET = sharedDataPath(DATASET_FILE);
const POLICY = {
  base_url: 'http://10.0.0.5:8000/v1',
  model: 'qwen-coder',
  api_key_env: 'POLICY_API_KEY',
  sampling: { temperature: 1, max_completion_tokens: 2048 },
};

describe('rollout-fleet submit --policy', () => {
  let dir: string;
  let env: Record<string, string>;
  let pipeline: Pipeline;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-cli-policy-'));
    // SWE-bench instance images exist on veFaaS, not in vefaas-local's examples: submitting "to the cloud" (never
    // contacted by submit) keeps submit from refusing them as missing local images.
    env = testEnv({
      VEFAAS_ENDPOINT: 'http://127.0.0.1:9',
      VEFAAS_FUNCTION_ROUTE: 'http://127.0.0.1:9/fn',
      VEFAAS_FUNCTION_ID: 'fn-policy',
      VEFAAS_ACCESS_KEY: 'AKLTpolicytest',
      VEFAAS_SECRET_KEY: 'policy-test-secret',
    });
    pipeline = openPipeline(configOf(env));
  });

  afterAll(async () => {
    await pipeline?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  itWith([sharedDataNeed(DATASET_FILE)], 'makes N policy episodes per dataset instance and enqueues them', async () => {
    const policyPath = join(dir, 'policy.yaml');
    await writeFile(
      policyPath,
      `base_url: ${POLICY.base_url}\nmodel: qwen-coder\napi_key_env: POLICY_API_KEY\nsampling:\n  temperature: 1\n  max_completion_tokens: 2048\n`,
    );
    const template = ['--image-template', 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest'];
    const dry = await runCli(
      ['submit', DATASET, '--policy', policyPath, '--samples', '4', '--run', 'rl-dry', '--dry-run', ...template],
      env,
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('submit: 20 episode(s) valid; dry run, nothing enqueued');

    const real = await runCli(
      ['submit', DATASET, '--policy', policyPath, '--samples', '2', '--run', 'rl-1', ...template],
      env,
    );
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toContain('run rl-1: 10 episode(s), 10 enqueued');
    const jobs = await pipeline.queue.getJobs(['waiting']);
    expect(jobs).toHaveLength(10);
    const episode = jobs[0]!.data.episode as {
      policy?: { model: string; api_key_env: string };
      problem_statement?: string;
    };
    expect(episode.policy).toMatchObject({ model: 'qwen-coder', api_key_env: 'POLICY_API_KEY' });
    expect(episode.problem_statement).toBeTruthy();
  });

  itWith(
    [sharedDataNeed(DATASET_FILE)],
    'refuses a broken policy file with exit 3, naming file and field, enqueueing nothing and echoing no key',
    async () => {
      const policyPath = join(dir, 'bad-policy.json');
      await writeFile(
        policyPath,
        JSON.stringify({ ...POLICY, api_key: 'sk-live-do-not-print-7731', sampling: { max_completion_tokens: 2048 } }),
      );
      const run = await runCli(['submit', DATASET, '--policy', policyPath, '--run', 'rl-bad'], env);
      expect(run.code).toBe(3);
      expect(run.stderr).toContain(`${policyPath}: policy.sampling.temperature: missing`);
      expect(run.stderr).toMatch(/policy: .*api_key/);
      expect(run.stderr).toContain('nothing was enqueued');
      expect(`${run.stdout}${run.stderr}`).not.toContain('sk-live-do-not-print-7731');
      expect(await pipeline.redis.exists(pipeline.keys.run('rl-bad'))).toBe(0);
    },
  );

  itWith(
    [sharedDataNeed(DATASET_FILE)],
    'warns, and submits all the same, when groups of several samples decode at temperature 0',
    async () => {
      const policyPath = join(dir, 'greedy-policy.json');
      await writeFile(
        policyPath,
        JSON.stringify({ ...POLICY, sampling: { temperature: 0, max_completion_tokens: 64 } }),
      );
      const template = ['--image-template', 'swebench/sweb.eval.x86_64.{instance_id_1776}:latest'];
      const args = ['submit', DATASET, '--policy', policyPath, '--run', 'rl-greedy', '--dry-run', ...template];
      const grouped = await runCli([...args, '--samples', '2'], env);
      expect(grouped.code, grouped.stderr).toBe(0);
      expect(grouped.stderr).toMatch(
        /^submit: warning: 5 group\(s\) of several samples decode with sampling\.temperature 0/m,
      );
      const single = await runCli(args, env);
      expect(single.code, single.stderr).toBe(0);
      expect(single.stderr).not.toContain('warning');
    },
  );

  it('documents --policy and the training export formats in --help', async () => {
    const submit = await runCli(['submit', '--help'], env);
    expect(submit.stdout).toContain('--policy <file>');
    const results = await runCli(['results', '--help'], env);
    expect(results.stdout).toMatch(/"openai"/);
    expect(results.stdout).toMatch(/"training"/);
  });
});
