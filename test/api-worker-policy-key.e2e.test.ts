/**
 * The README's "From Python" flow with the model being trained: `rollout-fleet api --worker` (API, worker and an
 * embedded vefaas-local in one process) against a keyed OpenAI-compatible endpoint whose key is exported in the
 * API's environment, as for `rollout-fleet worker`. The embedded worker must read the key the episode names
 * (policy.api_key_env): without it every sample fails POLICY_KEY_MISSING.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { commandNeed, describeWith } from '@rollout-fleet/test-kit/needs';
import {
  startScriptedPolicyServer,
  type PolicyScript,
  type ScriptedPolicyServer,
} from '@rollout-fleet/test-kit/scripted-policy';
import { spawnApi, type ApiChild } from './support/api-harness.js';
import { ROOT, childEnv, stopChild, testEnv } from './support/pipeline-harness.js';

const TASK = 'pyutils__calc-add';
const KEY = `key-${randomBytes(12).toString('hex')}`;

describeWith([bwrapNeed(), commandNeed('python3', 'python3')], 'api --worker with a keyed policy endpoint', () => {
  let server: ScriptedPolicyServer;
  let api: ApiChild;

  beforeAll(async () => {
    const scripts = JSON.parse(await readFile(`${ROOT}examples/policy/scripts.json`, 'utf8')) as Record<
      string,
      PolicyScript
    >;
    server = await startScriptedPolicyServer({ scripts: { [TASK]: scripts[TASK]! }, apiKey: KEY, route: () => TASK });
    api = await spawnApi(testEnv({ POLICY_API_KEY: KEY, LOG_LEVEL: 'warn' }), ['--worker']);
  });
  afterAll(async () => {
    if (api) await stopChild(api.child, 'SIGTERM');
    await server?.close();
  });

  it('grades a policy episode submitted from Python: the embedded worker sends the key it was given', async () => {
    const program = `
import json, sys
from rollout_fleet import Fleet
fleet = Fleet(sys.argv[1], token=None)
task = next(json.loads(l) for l in open("examples/policy/tasks.jsonl") if json.loads(l)["instance_id"] == sys.argv[2])
policy = dict(json.load(open("examples/policy/policy.json")), base_url=sys.argv[3])
fleet.submit("keyed", [task], policy=policy)
for result in fleet.results("keyed", follow=True):
    print(json.dumps({"status": result.status, "resolved": result.resolved, "reward": result.reward,
                      "failure": (result.raw.get("failure") or {}).get("code")}))
`;
    const python = spawn('python3', ['-c', program, api.url, TASK, server.baseUrl], {
      cwd: ROOT,
      env: childEnv({ PYTHONPATH: `${ROOT}clients/python`, PYTHONDONTWRITEBYTECODE: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    python.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    python.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const [code] = (await once(python, 'exit')) as [number | null];
    expect(code, `${output}\n--- api log ---\n${api.log()}`).toBe(0);
    // examples/policy/expected.json: calc-add is fixed and submitted.
    expect(JSON.parse(output.trim())).toEqual({ status: 'completed', resolved: true, reward: 1, failure: null });
    expect(api.log()).not.toContain(KEY);
  }, 180_000);
});
