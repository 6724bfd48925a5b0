/**
 * Grading uses the episode's `repo_dir`, everywhere: the patch is taken from it in the agent's sandbox, applied
 * to it in the fresh grading sandbox, and the eval script runs there (SWE-agent's own runs keep the repository
 * at `/<owner>__<repo>`, not /testbed). Real pipeline: the example image `swe-agent-test-repo` mounts its
 * repository at /SWE-agent__test-repo and has no /testbed, so a grader that fell back to /testbed anywhere would
 * find no repository and grade every patch unresolved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EpisodeSchema, type Episode, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  collectResults,
  configOf,
  openPipeline,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const REPO = '/SWE-agent__test-repo';
const TEST_PATCH = [
  'diff --git a/tests/test_division.py b/tests/test_division.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/tests/test_division.py',
  '@@ -0,0 +1,8 @@',
  '+import unittest',
  '+',
  '+from tests.missing_colon import division',
  '+',
  '+',
  '+class TestDivision(unittest.TestCase):',
  '+    def test_division(self):',
  '+        self.assertEqual(division(6, 3), 2)',
  '',
].join('\n');
const FIX_PATCH = [
  'diff --git a/tests/missing_colon.py b/tests/missing_colon.py',
  '--- a/tests/missing_colon.py',
  '+++ b/tests/missing_colon.py',
  '@@ -1,7 +1,7 @@',
  ' #!/usr/bin/env python3',
  ' ',
  ' ',
  '-def division(a: float, b: float) -> float',
  '+def division(a: float, b: float) -> float:',
  '     return a/b',
  ' ',
  ' ',
  '',
].join('\n');
const bash = (command: string): Episode['trajectory'][number] => ({ name: 'execute_bash', arguments: { command } });

function episode(id: string, extra: Record<string, unknown>): Episode {
  return EpisodeSchema.parse({
    run_id: 'repo-dir',
    episode_id: id,
    instance_id: 'sweagent-test-repo__division',
    sandbox: { image: 'swe-agent-test-repo' },
    repo_dir: REPO,
    eval: {
      repo: 'SWE-agent/test-repo',
      test_patch: TEST_PATCH,
      FAIL_TO_PASS: ['test_division (tests.test_division.TestDivision.test_division)'],
      PASS_TO_PASS: [],
      test_command: 'python3 -m unittest -v',
      log_parser: 'django',
      timeout_s: 60,
    },
    limits: { step_timeout_s: 30, episode_deadline_s: 300 },
    ...extra,
  });
}

describe('grading in the episode’s repo_dir (not /testbed)', () => {
  let host: Host;
  let pipeline: Pipeline;
  let worker: RunningWorker;
  const results = new Map<string, EpisodeResult>();

  beforeAll(async () => {
    host = await startHost();
    pipeline = openPipeline(configOf(testEnv({ RF_BACKOFF_MS: '100' })));
    const episodes = [
      // Relative paths: the session starts in repo_dir.
      episode('fixed', { trajectory: [bash("sed -i 's/-> float$/-> float:/' tests/missing_colon.py")] }),
      episode('untouched', { trajectory: [bash("echo '# note' >> README.md")] }),
      // A grading-only prediction: applied to repo_dir of a clean sandbox.
      episode('prediction', { model_patch: FIX_PATCH }),
    ];
    await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: 'repo-dir', episodes });
    worker = await startWorker({ config: pipeline.config, target: host.target, logger: silentLogger, concurrency: 3 });
    for (const result of await collectResults(pipeline, 'repo-dir', episodes.length))
      results.set(result.episode_id, result);
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await pipeline?.close();
    await host?.close();
  });

  it('takes the patch from repo_dir and grades it in repo_dir of a fresh sandbox: resolved, reward 1', () => {
    const result = results.get('fixed');
    expect(result).toMatchObject({ status: 'completed', resolved: true, reward: 1, failure: null });
    expect(result?.patch).toContain('diff --git a/tests/missing_colon.py b/tests/missing_colon.py');
    expect(result?.patch).toContain('+def division(a: float, b: float) -> float:');
    expect(result?.report).toMatchObject({ patch_successfully_applied: true, resolved: true });
  });

  it('a patch that does not fix the bug is graded there too: the suite cannot start, unresolved, reward 0', () => {
    const result = results.get('untouched');
    expect(result).toMatchObject({ status: 'completed', resolved: false, reward: 0, failure: null });
    expect(result?.patch).toContain('diff --git a/README.md b/README.md');
    // The unfixed module does not even import: no test result, no sign of a run (SWE-bench 5.x: not a run).
    expect(result?.report).toMatchObject({ resolved: false });
    expect(result?.grading?.problem).toContain('SUITE_NOT_RUN');
  });

  it('a given prediction is applied in repo_dir and resolves', () => {
    expect(results.get('prediction')).toMatchObject({
      status: 'completed',
      resolved: true,
      reward: 1,
      patch: FIX_PATCH,
    });
  });
});
