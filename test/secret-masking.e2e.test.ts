/**
 * An episode's secrets never leave its sandbox in what people or storage read (docs/policy.md, "Secrets in
 * observations"). A real pipeline — vefaas-local with bubblewrap sandboxes, the real worker, Redis — runs an
 * episode whose sandbox env holds a token and whose trajectory prints it every common way (`echo`, `env`,
 * `~/.netrc`, base64) and writes it into the repository. The stored result, the job's log rows, the HTTP API's
 * results stream, `rollout-fleet results`, the episode page and Bull Board's API show `***`, never the value nor
 * its base64; the patch is graded as the sandbox produced it (the token in it), only the stored copy is masked.
 * A policy episode (the scripted policy server as the model) that echoes the token: the model is sent `***`, so
 * neither its requests nor the stored conversation hold the value.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EpisodeSchema,
  SECRET_MASK,
  decodeResultValue,
  jobIdFor,
  type Episode,
  type EpisodeResult,
} from '@rollout-fleet/shared';
import { startScriptedPolicyServer, type ScriptedPolicyServer } from '@rollout-fleet/test-kit/scripted-policy';
import { startApi, type ApiServer } from '@rollout-fleet/api';
import { submitRun } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { startDashboard, type Dashboard } from '@rollout-fleet/api/dashboard';
import {
  cloudEnvFor,
  collectResults,
  configOf,
  episode,
  openPipeline,
  runCli,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';
import { POLICY_KEY, POLICY_KEY_ENV, call, calcEval, calls, policyEpisode } from './support/policy-scripts.js';

const SECRET = `sk-live-${randomUUID()}`;
/** Forms that must never show: the value, and `printf %s "$T" | base64` / `echo "$T" | base64`. */
const FORBIDDEN = [
  SECRET,
  Buffer.from(SECRET).toString('base64').slice(0, 40),
  Buffer.from(`${SECRET}\n`).toString('base64').slice(0, 40),
];
/** Secret-named but shorter than the minimum: documented as not masked. */
const SHORT = 'abc';
const RUN = 'secrets';
const bash = (command: string, observation?: string): Episode['trajectory'][number] => ({
  name: 'execute_bash',
  arguments: { command },
  ...(observation === undefined ? {} : { observation }),
});

/** A test that passes only when the graded patch holds the token as the sandbox wrote it. */
const TEST_PATCH = [
  'diff --git a/tests/test_token.py b/tests/test_token.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/tests/test_token.py',
  '@@ -0,0 +1,7 @@',
  '+import unittest',
  '+',
  '+',
  '+class TestToken(unittest.TestCase):',
  '+    def test_token(self):',
  '+        from pyutils.token import TOKEN',
  `+        self.assertEqual(TOKEN, "${SECRET}")`,
  '',
].join('\n');

function secretEpisode(): Episode {
  return episode(RUN, 'echo-secret', {
    sandbox: { image: 'pyutils', env: { API_TOKEN: SECRET, SHORT_TOKEN: SHORT, RF_LABEL: 'visible-label' } },
    trajectory: [
      // Recorded (as a recording from the same sandbox would show it): still a fidelity match, kept without the value.
      bash(
        'echo "token=$API_TOKEN short=$SHORT_TOKEN label=$RF_LABEL"',
        `token=${SECRET} short=${SHORT} label=visible-label\n`,
      ),
      bash('env | sort'),
      bash('printf "machine example.com login me password %s\\n" "$API_TOKEN" > ~/.netrc && cat ~/.netrc'),
      bash('printf %s "$API_TOKEN" | base64 -w0; echo; echo "$API_TOKEN" | base64 -w0'),
      bash('printf \'TOKEN = "%s"\\n\' "$API_TOKEN" > /testbed/pyutils/token.py && git -C /testbed status --short'),
    ],
    eval: {
      repo: 'example/pyutils',
      test_patch: TEST_PATCH,
      FAIL_TO_PASS: ['test_token (tests.test_token.TestToken.test_token)'],
      test_command: 'python3 -m unittest -v',
      log_parser: 'django',
      timeout_s: 60,
    },
  });
}

/** A model that prints the token, then submits. */
const LEAKY_MODEL = { turns: [calls(call.bash('echo "t=$API_TOKEN"')), calls(call.submit())] };

function expectMasked(what: string, text: string): void {
  for (const form of FORBIDDEN)
    expect(text.includes(form), `${what} shows the secret (${form === SECRET ? 'raw' : 'base64'})`).toBe(false);
}

describe('secrets in observations are masked before results, logs, streams and pages', () => {
  let host: Host;
  let pipeline: Pipeline;
  let worker: RunningWorker;
  let api: ApiServer;
  let dashboard: Dashboard;
  let policyServer: ScriptedPolicyServer;
  let env: Record<string, string>;
  let result: EpisodeResult;
  let policyResult: EpisodeResult;

  beforeAll(async () => {
    host = await startHost();
    policyServer = await startScriptedPolicyServer({ scripts: { leaky: LEAKY_MODEL }, apiKey: POLICY_KEY });
    env = testEnv();
    const config = configOf(env);
    pipeline = openPipeline(config);
    const policy = EpisodeSchema.parse(
      policyEpisode({
        runId: RUN,
        id: 'policy-echo',
        baseUrl: policyServer.baseUrl,
        script: 'leaky',
        evalSpec: await calcEval(),
        episode: { sandbox: { image: 'pyutils', env: { API_TOKEN: SECRET } } },
      }),
    );
    await submitRun({
      queue: pipeline.queue,
      redis: pipeline.redis,
      keys: pipeline.keys,
      runId: RUN,
      episodes: [secretEpisode(), policy],
    });
    const secret = (name: string): string | undefined => (name === POLICY_KEY_ENV ? POLICY_KEY : undefined);
    worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 2, secret });
    const results = await collectResults(pipeline, RUN, 2);
    result = results.find((r) => r.episode_id === 'echo-secret')!;
    policyResult = results.find((r) => r.episode_id === 'policy-echo')!;
    api = await startApi({
      config,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
      target: host.target,
      reaper: false,
      streams: { blockMs: 200 },
    });
    dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: silentLogger });
  }, 120_000);

  afterAll(async () => {
    await dashboard?.close();
    await api?.close();
    await worker?.close();
    await pipeline?.close();
    await policyServer?.close();
    await host?.close();
  });

  it('the stored result: every observation shows the marker, never the value or its base64', async () => {
    expect(result).toMatchObject({ status: 'completed', failure: null });
    const [echoed, env, netrc, base64] = result.steps;
    expect(echoed?.output).toBe(`token=${SECRET_MASK} short=${SHORT} label=visible-label\n`);
    expect(env?.output).toContain(`API_TOKEN=${SECRET_MASK}\n`);
    expect(env?.output).toContain('RF_LABEL=visible-label\n');
    expect(netrc?.output).toBe(`machine example.com login me password ${SECRET_MASK}\n`);
    expect(
      base64?.output
        .split('\n')
        .slice(0, 2)
        .every((line) => line.startsWith(SECRET_MASK)),
    ).toBe(true);
    // The recorded observation of step 0 showed the value too: masked alike, it still matches.
    expect(result.fidelity?.steps[0]?.verdict).toBe('match');
    // Decoded: a large result is stored compressed, where the secret could not be seen even if it were there.
    const stored = await pipeline.redis.getBuffer(pipeline.keys.result(RUN, 'echo-secret', 0));
    expectMasked('the stored result', stored === null ? '' : decodeResultValue(stored));
  });

  it('a policy episode: the model is sent the marker, never the value; its stored conversation likewise', () => {
    expect(policyResult).toMatchObject({ status: 'completed', exit_status: 'submitted' });
    expect(policyResult.steps[0]?.output).toBe(`t=${SECRET_MASK}\n`);
    const requests = policyServer.requestsFor('leaky');
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests[1]!.body)).toContain(`t=${SECRET_MASK}`);
    for (const request of requests) expectMasked('a request to the model', JSON.stringify(request.body));
    expectMasked('the policy episode’s result', JSON.stringify(policyResult));
  });

  it('grades the patch as the sandbox produced it; only the stored copy is masked', () => {
    // test_token compares the file with the literal token: it passes only on the unmasked patch.
    expect(result).toMatchObject({ resolved: true, reward: 1 });
    expect(result.grading?.tests).toEqual([
      expect.objectContaining({ id: 'test_token (tests.test_token.TestToken.test_token)', outcome: 'success' }),
    ]);
    expect(result.patch).toContain(`+TOKEN = "${SECRET_MASK}"`);
  });

  it('the job log rows, as written to Redis and as Bull Board serves them', async () => {
    const jobId = jobIdFor(RUN, 'echo-secret', 0);
    const { logs } = await pipeline.queue.getJobLogs(jobId);
    expect(logs.length).toBeGreaterThan(0);
    expectMasked('the job log rows', logs.join('\n'));
    for (const path of [
      `api/queues/${pipeline.config.queue.name}/${encodeURIComponent(jobId)}`,
      `api/queues/${pipeline.config.queue.name}/${encodeURIComponent(jobId)}/logs`,
    ]) {
      const res = await fetch(`${dashboard.url}${path}`);
      expect(res.status).toBe(200);
      expectMasked(`Bull Board ${path}`, await res.text());
    }
  });

  it('the episode page and the run page', async () => {
    const page = await fetch(`${dashboard.url}episodes/${encodeURIComponent(jobIdFor(RUN, 'echo-secret', 0))}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expectMasked('the episode page', html);
    expect(html).toContain(SECRET_MASK);
    const run = await fetch(`${dashboard.url}runs/${RUN}`);
    expect(run.status).toBe(200);
    expectMasked('the run page', await run.text());
  });

  it('the HTTP API’s results stream', async () => {
    const res = await fetch(`${api.url}/v1/runs/${RUN}/results?follow=false`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expectMasked('the API results stream', body);
    expect(body).toContain(`token=${SECRET_MASK}`);
  });

  it('`rollout-fleet results`', async () => {
    const printed = await runCli(['results', '--run', RUN], { ...env, ...cloudEnvFor(host.handle) });
    expect(printed.code, printed.stderr).toBe(0);
    expectMasked('rollout-fleet results', printed.stdout + printed.stderr);
    expect(printed.stdout).toContain(`token=${SECRET_MASK}`);
  });
});
