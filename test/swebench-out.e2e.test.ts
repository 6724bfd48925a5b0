/**
 * `results --format swebench --out DIR` writes the tree SWE-bench's harness writes, counted the way its
 * `make_run_report` counts it (issue 29): real CLI processes (submit, worker, results) against real Redis and
 * vefaas-local, a SWE-bench dataset of six pyutils instances graded with pytest, and SWE-agent-style predictions
 * of one model. The expected counts come from reading the harness (run_evaluation.py / reporting.py, main):
 * - an instance of the dataset without a prediction is incomplete; `total_instances` is the dataset's size;
 * - `""` and null predictions are not run: no directory, `empty_patch_ids`;
 * - a patch that does not apply leaves `patch.diff` and `run_instance.log` but no `report.json`: an error;
 * - the rest have all five files and count as completed, resolved or not by `report.json`.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { startDashboard } from '@rollout-fleet/api/dashboard';
import {
  cloudEnvFor,
  collectResults,
  configOf,
  openPipeline,
  runCli,
  silentLogger,
  spawnWorker,
  startHost,
  stopChild,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const RUN = 'sweep-1';
const MODEL = 'acme/coder-7b';
const TEST_PATCH = [
  'diff --git a/tests/test_add.py b/tests/test_add.py',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/tests/test_add.py',
  '@@ -0,0 +1,8 @@',
  '+from pyutils.calc import add, mul',
  '+',
  '+',
  '+def test_add():',
  '+    assert add(2, 3) == 5',
  '+',
  '+def test_mul():',
  '+    assert mul(3, 4) == 12',
  '',
].join('\n');
/** A patch of pyutils/calc.py's first four lines (`add` and the blank line after it) replacing one of them. */
function calcPatch(line: number, replacement: string): string {
  const before = ['def add(a, b):', '    """Return the sum of a and b."""', '    return a - b', ''];
  const hunk = before.flatMap((text, i) => (i === line ? [`-${text}`, `+${replacement}`] : [` ${text}`]));
  return [
    'diff --git a/pyutils/calc.py b/pyutils/calc.py',
    '--- a/pyutils/calc.py',
    '+++ b/pyutils/calc.py',
    '@@ -1,4 +1,4 @@',
    ...hunk,
    '',
  ].join('\n');
}
const GOLD = calcPatch(2, '    return a + b');
const COSMETIC = calcPatch(1, '    """Return a + b (or so it says)."""');
const NO_SUCH_FILE = [
  'diff --git a/pyutils/missing.py b/pyutils/missing.py',
  '--- a/pyutils/missing.py',
  '+++ b/pyutils/missing.py',
  '@@ -1,2 +1,2 @@',
  ' x = 1',
  '-y = 2',
  '+y = 3',
  '',
].join('\n');
const F2P = 'tests/test_add.py::test_add';
const P2P = 'tests/test_add.py::test_mul';
const ids = [1, 2, 3, 4, 5, 6].map((n) => `pyutils__calc-add-${n}`);
const [RESOLVED, UNRESOLVED, EMPTY, NOT_APPLIED, NO_PREDICTION, NULL_PATCH] = ids as [
  string,
  string,
  string,
  string,
  string,
  string,
];

function instance(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    instance_id: id,
    repo: 'example/pyutils',
    version: '0.1',
    patch: GOLD,
    test_patch: TEST_PATCH,
    // JSON-encoded as in the Hugging Face datasets.
    FAIL_TO_PASS: JSON.stringify([F2P]),
    PASS_TO_PASS: JSON.stringify([P2P]),
    test_cmd: 'python3 -m pytest -rA',
    problem_statement: `add() subtracts (${id})`,
    ...extra,
  });
}

describe('results --format swebench --out: the harness’s tree and run report', () => {
  let dir: string;
  let host: Host;
  let env: Record<string, string>;
  let pipeline: Pipeline;
  let submitted: { code: number | null; stderr: string };
  let out: string;
  let printed: string;
  let dataset: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-swebench-out-'));
    host = await startHost();
    env = { ...testEnv({ RF_BACKOFF_MS: '100' }), ...cloudEnvFor(host.handle) };
    pipeline = openPipeline(configOf(env));
  });

  afterAll(async () => {
    await pipeline?.close();
    await host?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  itWith(
    [bwrapNeed()],
    'grades a sweep and writes logs/run_evaluation/<run>/<model>/<instance>/ plus <model>.<run>.json',
    async () => {
      dataset = join(dir, 'dataset.jsonl');
      await writeFile(
        dataset,
        [
          ...ids.map((id) => instance(id)),
          // Byte-identical to line 1: merged without a word.
          instance(RESOLVED),
          // A different record of line 5's id: the harness keeps the later one; we say so, naming both lines.
          instance(NO_PREDICTION, { problem_statement: 'the later record' }),
        ].join('\n') + '\n',
      );
      const predictions = join(dir, 'preds.json');
      const patches: Record<string, string | null> = {
        [RESOLVED]: GOLD,
        [UNRESOLVED]: COSMETIC,
        [EMPTY]: '',
        [NOT_APPLIED]: NO_SUCH_FILE,
        [NULL_PATCH]: null,
      };
      await writeFile(
        predictions,
        JSON.stringify(
          Object.fromEntries(
            Object.entries(patches).map(([id, patch]) => [
              id,
              { model_name_or_path: MODEL, instance_id: id, model_patch: patch },
            ]),
          ),
        ),
      );
      submitted = await runCli(
        ['submit', dataset, '--predictions', predictions, '--run', RUN, '--image', 'pyutils'],
        env,
      );
      expect(submitted.code, submitted.stderr).toBe(0);
      expect(submitted.stderr).toBe(
        `submit: warning: ${dataset}:8: instance_id: instance "${NO_PREDICTION}" is also defined at ${dataset}:5, differently; ` +
          'this later record is used — SWE-bench keeps the last record of an instance id; remove the one you do not mean\n',
      );

      // Before any result: said, since the running predictions would count as instances without one.
      const early = await runCli(['results', '--run', RUN, '--format', 'swebench'], env);
      expect(early.code, early.stderr).toBe(0);
      expect(early.stderr).toContain(
        `results: warning: run ${RUN} is not finished (0 of 5 episodes done); episodes without a result yet count as instances without a prediction`,
      );

      const worker = spawnWorker(env, ['--concurrency', '2']);
      try {
        const results = await collectResults(pipeline, RUN, 5);
        expect(
          results.map((r) => r.status),
          worker.log(),
        ).toEqual(Array(5).fill('completed'));
      } finally {
        await stopChild(worker);
      }
      out = join(dir, 'out');
      const exported = await runCli(['results', '--run', RUN, '--format', 'swebench', '--out', out], env);
      expect(exported.code, exported.stderr).toBe(0);
      printed = exported.stdout;

      // The counts and ids the harness's make_run_report gives for these predictions against this dataset.
      const reportPath = join(out, 'acme__coder-7b.sweep-1.json');
      const text = await readFile(reportPath, 'utf8');
      expect(JSON.parse(text)).toEqual({
        total_instances: 6,
        submitted_instances: 5,
        completed_instances: 2,
        resolved_instances: 1,
        unresolved_instances: 1,
        infra_failure_instances: 0,
        ambiguous_failure_instances: 0,
        empty_patch_instances: 2,
        error_instances: 1,
        completed_ids: [RESOLVED, UNRESOLVED],
        incomplete_ids: [NO_PREDICTION],
        empty_patch_ids: [EMPTY, NULL_PATCH],
        submitted_ids: [RESOLVED, UNRESOLVED, EMPTY, NOT_APPLIED, NULL_PATCH],
        resolved_ids: [RESOLVED],
        unresolved_ids: [UNRESOLVED],
        infra_failure_ids: [],
        ambiguous_failure_ids: [],
        failure_reasons: {},
        error_ids: [NOT_APPLIED],
        schema_version: 2,
      });
      // json.dumps(indent=4) then print(): four-space indent, a final newline.
      expect(text.startsWith('{\n    "total_instances": 6,\n')).toBe(true);
      expect(text.endsWith('\n    "schema_version": 2\n}\n')).toBe(true);
      expect(printed).toContain('Total instances: 6\nInstances submitted: 5\nInstances completed: 2\n');
      expect(printed).toContain(`Report written to ${reportPath}\n`);

      // Only instances that were run have a directory; which files each has follows run_instance.
      const modelDir = join(out, 'logs', 'run_evaluation', RUN, 'acme__coder-7b');
      expect((await readdir(modelDir)).sort()).toEqual([RESOLVED, UNRESOLVED, NOT_APPLIED].sort());
      const all = ['eval.sh', 'patch.diff', 'report.json', 'run_instance.log', 'test_output.txt'];
      expect((await readdir(join(modelDir, RESOLVED))).sort()).toEqual(all);
      expect((await readdir(join(modelDir, UNRESOLVED))).sort()).toEqual(all);
      expect((await readdir(join(modelDir, NOT_APPLIED))).sort()).toEqual(['patch.diff', 'run_instance.log']);

      const read = (id: string, name: string): Promise<string> => readFile(join(modelDir, id, name), 'utf8');
      const resolvedReport = await read(RESOLVED, 'report.json');
      expect(JSON.parse(resolvedReport)).toEqual({
        [RESOLVED]: {
          patch_is_None: false,
          patch_exists: true,
          patch_successfully_applied: true,
          resolved: true,
          infra_failure: false,
          tests_status: {
            FAIL_TO_PASS: { success: [F2P], failure: [] },
            PASS_TO_PASS: { success: [P2P], failure: [] },
            FAIL_TO_FAIL: { success: [], failure: [] },
            PASS_TO_FAIL: { success: [], failure: [] },
          },
        },
      });
      // f.write(json.dumps(report, indent=4)): no final newline.
      expect(resolvedReport.startsWith(`{\n    "${RESOLVED}": {\n        "patch_is_None": false,\n`)).toBe(true);
      expect(resolvedReport.endsWith('}')).toBe(true);
      expect(JSON.parse(await read(UNRESOLVED, 'report.json'))).toMatchObject({
        [UNRESOLVED]: { resolved: false, tests_status: { FAIL_TO_PASS: { success: [], failure: [F2P] } } },
      });

      expect(await read(RESOLVED, 'patch.diff')).toBe(GOLD);
      expect(await read(NOT_APPLIED, 'patch.diff')).toBe(NO_SUCH_FILE);
      // test_output.txt is the eval script's output alone (set -x markers, pytest's summary); the apply step is
      // run_instance.log's, as in the harness.
      const testOutput = await read(RESOLVED, 'test_output.txt');
      // The harness's markers (carrying the grader's nonce: docs/adversarial-grading.md), as `set -x` prints them.
      expect(testOutput).toMatch(/^\+ : '>>>>> Start Test Output[^'\n]*'$/m);
      expect(testOutput).toContain(`PASSED ${F2P}`);
      expect(testOutput).toMatch(/^\+ : '>>>>> End Test Output[^'\n]*'$/m);
      expect(testOutput).not.toContain('>>>>> Applied Patch');
      const evalScript = await read(RESOLVED, 'eval.sh');
      expect(evalScript.startsWith('#!/bin/bash\n')).toBe(true);
      expect(evalScript).toContain(`python3 -m pytest -rA tests/test_add.py`);
      // The gold patch applies with the first of the harness's commands.
      expect(await read(RESOLVED, 'run_instance.log')).toMatch(
        / - INFO - >>>>> Applied Patch:\nChecking patch pyutils\/calc.py/,
      );
      expect(await read(RESOLVED, 'run_instance.log')).not.toContain('Failed to apply patch');
      // One record per failed command of the apply step, as the harness logs them.
      expect(await read(NOT_APPLIED, 'run_instance.log')).toMatch(
        /- INFO - Failed to apply patch to container: git apply --verbose\n(?:(?!\d{4}-\d\d-\d\d ).*\n)*\d{4}-\d\d-\d\d [\d:,]+ - INFO - Failed to apply patch to container: /,
      );
      expect(await read(RESOLVED, 'run_instance.log')).toContain(`Result for ${RESOLVED}: resolved: True`);
      expect(await read(NOT_APPLIED, 'run_instance.log')).toMatch(/ - INFO - >>>>> Patch Apply Failed/);

      // The dashboard's episode page links the same files, served with the same bytes.
      const dashboard = await startDashboard({
        config: configOf(env),
        port: 0,
        host: '127.0.0.1',
        logger: silentLogger,
      });
      try {
        for (const id of [RESOLVED, NOT_APPLIED]) {
          const jobId = `${RUN}|${id}|0`;
          const pageHtml = await (await fetch(new URL(`/episodes/${encodeURIComponent(jobId)}`, dashboard.url))).text();
          expect(pageHtml).toContain('<h2>SWE-bench files</h2>');
          expect(pageHtml).toContain(`logs/run_evaluation/${RUN}/acme__coder-7b/${id}/`);
          const links = [...pageHtml.matchAll(/href="(\/episode-files\/[^"]+)">([^<]+)</g)].map(
            (m): [string, string] => [m[1] ?? '', m[2] ?? ''],
          );
          expect(links.map(([, name]) => name).sort()).toEqual((await readdir(join(modelDir, id))).sort());
          for (const [href, name] of links) {
            const served = await fetch(new URL(href.replaceAll('&amp;', '&'), dashboard.url));
            expect(served.status, href).toBe(200);
            expect(await served.text()).toBe(await read(id, name));
          }
        }
        expect(
          await (
            await fetch(new URL(`/episodes/${encodeURIComponent(`${RUN}|${NOT_APPLIED}|0`)}`, dashboard.url))
          ).text(),
        ).toContain('counts this instance as an error: no report.json');
        const missing = await fetch(
          new URL(`/episode-files/report.json/${encodeURIComponent(`${RUN}|${NOT_APPLIED}|0`)}`, dashboard.url),
        );
        expect(missing.status).toBe(404);
      } finally {
        await dashboard.close();
      }

      // Without --out: every report.json merged, as before — the empty patches have no entry, as in the harness.
      const merged = await runCli(['results', '--run', RUN, '--format', 'swebench'], env);
      expect(merged.code, merged.stderr).toBe(0);
      expect(Object.keys(JSON.parse(merged.stdout) as object).sort()).toEqual([RESOLVED, UNRESOLVED]);
    },
    240_000,
  );

  itWith(
    [bwrapNeed()],
    'beyond the limit the result keeps head + marker + tail, the worker writes the whole log to RF_ARTIFACTS_DIR, and test_output.txt is the whole log again',
    async () => {
      expect(dataset, 'the first test wrote the dataset').toBeDefined();
      const artifacts = join(dir, 'artifacts');
      const small = {
        ...testEnv({ RF_BACKOFF_MS: '100' }),
        ...cloudEnvFor(host.handle),
        RF_STEP_OUTPUT_LIMIT_BYTES: '1024',
      };
      const withFiles = { ...small, RF_ARTIFACTS_DIR: artifacts };
      const p = openPipeline(configOf(small));
      try {
        const predictions = join(dir, 'gold.jsonl');
        await writeFile(
          predictions,
          `${JSON.stringify({ model_name_or_path: MODEL, instance_id: RESOLVED, model_patch: GOLD })}\n`,
        );
        const submitted = await runCli(
          ['submit', dataset, '--predictions', predictions, '--run', 'cut', '--image', 'pyutils'],
          small,
        );
        expect(submitted.code, submitted.stderr).toBe(0);
        const worker = spawnWorker(withFiles, ['--concurrency', '1']);
        let result;
        try {
          [result] = await collectResults(p, 'cut', 1);
        } finally {
          await stopChild(worker);
        }
        expect(result, worker.log()).toMatchObject({ status: 'completed', resolved: true });
        const grading = result!.grading!;
        expect(grading.log_truncated).toBe(true);
        expect(grading.log_bytes).toBeGreaterThan(1024);
        expect(grading.log).toContain(`[... output truncated: ${grading.log_bytes} bytes in total, `);
        expect(result!.artifacts?.root).toBe(artifacts);
        expect([...(result!.artifacts?.files ?? [])].sort()).toEqual(['eval.log', 'eval.sh', 'patch.diff']);
        const files = join(artifacts, result!.artifacts!.path);
        const whole = await readFile(join(files, 'eval.log'), 'utf8');
        expect(Buffer.byteLength(whole)).toBe(grading.log_bytes);
        expect(await readFile(join(files, 'patch.diff'), 'utf8')).toBe(GOLD);
        expect(await readFile(join(files, 'eval.sh'), 'utf8')).toBe(grading.eval_script);

        const outWhole = join(dir, 'out-whole');
        const exported = await runCli(
          ['results', '--run', 'cut', '--format', 'swebench', '--out', outWhole],
          withFiles,
        );
        expect(exported.code, exported.stderr).toBe(0);
        const instanceDir = join('logs', 'run_evaluation', 'cut', 'acme__coder-7b', RESOLVED);
        const testOutput = await readFile(join(outWhole, instanceDir, 'test_output.txt'), 'utf8');
        expect(testOutput).not.toContain('output truncated');
        expect(whole.endsWith(testOutput)).toBe(true);
        expect(testOutput).toContain(`PASSED ${F2P}`);

        // Without the files (another host, cleaned up): the cut copy, its marker visible, and a warning.
        await rm(artifacts, { recursive: true });
        const outCut = join(dir, 'out-cut');
        const cut = await runCli(['results', '--run', 'cut', '--format', 'swebench', '--out', outCut], withFiles);
        expect(cut.code, cut.stderr).toBe(0);
        expect(cut.stderr).toContain(
          `results: warning: ${RESOLVED}: the whole eval log is not readable; test_output.txt is cut`,
        );
        expect(await readFile(join(outCut, instanceDir, 'test_output.txt'), 'utf8')).toContain(
          `[... output truncated: ${grading.log_bytes} bytes in total, `,
        );
      } finally {
        await p.close();
      }
    },
    240_000,
  );
});
