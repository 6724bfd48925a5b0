/**
 * `npm run demo -- --policy`: the agent loop without a GPU. A scripted OpenAI-compatible policy server plays
 * examples/policy/scripts.json (one script per task, picked by the task's problem statement in the prompt);
 * examples/policy/tasks.jsonl gets examples/policy/policy.json attached the way `submit --policy` does, with
 * base_url pointed at the scripted server. Outcomes are checked against examples/policy/expected.json.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { EpisodeResult } from '@rollout-fleet/shared';
import {
  startScriptedPolicyServer,
  type PolicyScript,
  type ScriptedPolicyServer,
} from '@rollout-fleet/test-kit/scripted-policy';

export interface PolicyDemo {
  server: ScriptedPolicyServer;
  files: Array<{ path: string; text: string }>;
  policyFile: { path: string; text: string };
  /** What the worker processes need: the key variable the policy block names. */
  env: Record<string, string>;
  /** Where outcomes are checked against. */
  expectedPath: string;
  /** The results table, and how many outcomes differ from the expected ones. */
  report(results: readonly EpisodeResult[]): { rows: string[][]; mismatches: number };
  close(): Promise<void>;
}

interface Expected {
  resolved: boolean;
  exit_status: string;
  note: string;
}

export async function startPolicyDemo(root: string): Promise<PolicyDemo> {
  const dir = `${root}examples/policy/`;
  const tasksPath = `${dir}tasks.jsonl`;
  const tasksText = await readFile(tasksPath, 'utf8');
  const scripts = JSON.parse(await readFile(`${dir}scripts.json`, 'utf8')) as Record<string, PolicyScript>;
  const expected = JSON.parse(await readFile(`${dir}expected.json`, 'utf8')) as Record<string, Expected>;
  const statements = tasksText
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { instance_id: string; problem_statement: string });
  const apiKey = `demo-${randomBytes(12).toString('hex')}`;
  // One served model for every task, as with a real endpoint: the script is found by the task in the prompt.
  const server = await startScriptedPolicyServer({
    scripts,
    apiKey,
    route: (body) => {
      const prompt = JSON.stringify((body.messages as unknown[] | undefined)?.slice(0, 2) ?? []);
      return statements.find((task) => prompt.includes(JSON.stringify(task.problem_statement).slice(1, -1)))
        ?.instance_id;
    },
  });
  const policy = JSON.parse(await readFile(`${dir}policy.json`, 'utf8')) as Record<string, unknown>;
  const keyEnv = String(policy.api_key_env);
  return {
    server,
    files: [{ path: tasksPath, text: tasksText }],
    policyFile: { path: `${dir}policy.json`, text: JSON.stringify({ ...policy, base_url: server.baseUrl }) },
    env: { [keyEnv]: apiKey },
    expectedPath: 'examples/policy/expected.json',
    report: (results) => {
      const rows = [
        [
          'instance',
          'resolved',
          'exit status',
          'expected',
          'reward',
          'turns',
          'retried',
          'format errors',
          'tokens',
          'duration',
        ],
      ];
      let mismatches = 0;
      for (const r of [...results].sort((a, b) => a.instance_id.localeCompare(b.instance_id))) {
        const want = expected[r.instance_id];
        const ok = r.status === 'completed' && r.resolved === want?.resolved && r.exit_status === want?.exit_status;
        if (!ok) mismatches += 1;
        const turns = r.turns ?? [];
        rows.push([
          r.instance_id,
          r.status === 'failed' ? `failed (${r.failure?.code})` : String(r.resolved),
          r.exit_status ?? '-',
          `${String(want?.resolved)}, ${want?.exit_status ?? '?'}${ok ? '' : '  <-- MISMATCH'}`,
          String(r.reward ?? '-'),
          String(turns.length),
          String(turns.reduce((n, t) => n + t.retries, 0)),
          String(turns.filter((t) => t.format_error !== undefined).length),
          String(r.tokens?.total_tokens ?? '-'),
          `${(r.timings.total_ms / 1000).toFixed(1)}s`,
        ]);
      }
      return { rows, mismatches };
    },
    close: () => server.close(),
  };
}
