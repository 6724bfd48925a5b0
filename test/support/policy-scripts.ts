/**
 * Building blocks of the policy-loop tests: tool calls as a model would make them on the pyutils example image,
 * policy episodes pointed at the scripted server, and the calc-add task's eval spec from examples/sweep.jsonl.
 */
import type { EpisodeInput } from '@rollout-fleet/shared';
import type { ScriptedAttempt, ScriptedToolCall } from '@rollout-fleet/test-kit/scripted-policy';
import { readSweep } from './pipeline-harness.js';

export const CALC_FILE = '/testbed/pyutils/calc.py';
export const CALC_PROBLEM =
  'pyutils.calc.add(2, 3) returns -1 instead of 5: add() must return the sum of its arguments.';
export const POLICY_KEY_ENV = 'POLICY_TEST_API_KEY';
export const POLICY_KEY = 'sk-policy-test-7f3a9c1e5b2d4086';

export const call = {
  bash: (command: string): ScriptedToolCall => ({ name: 'bash', arguments: { command } }),
  view: (path = CALC_FILE): ScriptedToolCall => ({ name: 'str_replace_editor', arguments: { command: 'view', path } }),
  replace: (oldStr: string, newStr: string, path = CALC_FILE): ScriptedToolCall => ({
    name: 'str_replace_editor',
    arguments: { command: 'str_replace', path, old_str: oldStr, new_str: newStr },
  }),
  submit: (): ScriptedToolCall => ({ name: 'submit', arguments: {} }),
};

export const FIX = call.replace('    return a - b', '    return a + b');
export const WRONG_FIX = call.replace('    return a - b', '    return a * b');

/** A reply with these tool calls. */
export function calls(...toolCalls: ScriptedToolCall[]): ScriptedAttempt {
  return { reply: { tool_calls: toolCalls } };
}

export async function calcEval(): Promise<NonNullable<EpisodeInput['eval']>> {
  const first = (await readSweep())
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as EpisodeInput)
    .find((e) => e.instance_id === 'pyutils__calc-add');
  if (!first?.eval) throw new Error('examples/sweep.jsonl has no pyutils__calc-add eval spec');
  return first.eval;
}

/** A policy episode on the pyutils image whose model is the named script. */
export function policyEpisode(o: {
  runId: string;
  id: string;
  baseUrl: string;
  script?: string;
  evalSpec: NonNullable<EpisodeInput['eval']>;
  policy?: Record<string, unknown>;
  episode?: Partial<EpisodeInput>;
}): EpisodeInput {
  return {
    run_id: o.runId,
    episode_id: o.id,
    instance_id: `pyutils__${o.id}`,
    sandbox: { image: 'pyutils' },
    problem_statement: CALC_PROBLEM,
    eval: o.evalSpec,
    limits: { step_timeout_s: 30, episode_deadline_s: 300 },
    policy: {
      base_url: o.baseUrl,
      model: o.script ?? o.id,
      api_key_env: POLICY_KEY_ENV,
      sampling: { temperature: 0.7, top_p: 0.95, max_completion_tokens: 256, seed: 11 },
      limits: { request_timeout_s: 5, retries: 4 },
      ...o.policy,
    },
    ...o.episode,
  } as EpisodeInput;
}
