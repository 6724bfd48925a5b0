/**
 * The adversarial corpus's shared harness (docs/adversarial-grading.md): the project's pyutils task (`add` returns
 * `a - b`; FAIL_TO_PASS `test_add`) run through the real pipeline — vefaas-local bubblewrap sandboxes, real Redis,
 * the default configuration — under three runners: `python3 -m unittest -v` (the django parser, Django's output
 * format), pytest (`python3 -m pytest -rA`, the pytest parser) and Django's own style of runner script.
 */
import { type Episode, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker } from '@rollout-fleet/worker';
import {
  SWEEP,
  collectResults,
  configOf,
  openPipeline,
  readSweep,
  silentLogger,
  testEnv,
  type Host,
} from '../support/pipeline-harness.js';

export type Step = Episode['trajectory'][number];
export const bash = (command: string): Step => ({ name: 'execute_bash', arguments: { command } });
/** A command writing `body` to `path` (a quoted heredoc: no expansion). */
export const writeFile = (path: string, body: string): string => `cat > ${path} <<'RF_EOF'\n${body}\nRF_EOF`;
export const FIX = bash("sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py");
export const TOUCH = bash("echo '# touched' >> /testbed/pyutils/calc.py");
/** Appends Python to the module the tests import (runs at import inside the test process). */
export const atImport = (python: string): Step =>
  // (The heredoc's terminator must stand alone on its line: the next command goes on a line of its own.)
  bash(`${writeFile('/tmp/rf-append.py', python)}\ncat /tmp/rf-append.py >> /testbed/pyutils/calc.py`);

export type Runner = 'unittest' | 'pytest' | 'django-style';

/** The pyutils calc-add episode for one runner; test ids as that runner's parser names them. */
export async function calcAdd(runner: Runner): Promise<Episode> {
  const validated = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: 'adv' });
  const base = validated.episodes.find((e) => e.episode_id === 'pyutils__calc-add') as Episode;
  const spec = base.eval!;
  if (runner === 'unittest') return base;
  if (runner === 'django-style') {
    // Django's runtests.py shape: a repository script that runs unittest at verbosity 2 (sitecustomize hooks it).
    return {
      ...base,
      eval: {
        ...spec,
        test_command:
          'python3 -c \'import sys, unittest; r = unittest.main(module=None, argv=["runtests", "discover", "-v"], exit=False).result; sys.exit(not r.wasSuccessful())\'',
      },
    };
  }
  const id = (name: string): string => {
    const m = /^(\w+) \(tests\.test_basic\.(\w+)\.\w+\)$/.exec(name);
    return m ? `tests/test_basic.py::${m[2]}::${m[1]}` : name;
  };
  return {
    ...base,
    eval: {
      ...spec,
      test_command: 'python3 -m pytest -rA -p no:cacheprovider',
      log_parser: 'pytest',
      FAIL_TO_PASS: spec.FAIL_TO_PASS.map(id),
      PASS_TO_PASS: spec.PASS_TO_PASS.map(id),
    },
  };
}

export interface Case {
  id: string;
  runner: Runner;
  trajectory: Step[];
  /** Overrides of the eval block (a shorter timeout). */
  eval?: Partial<NonNullable<Episode['eval']>>;
}

/** Runs every case in one run on one worker; results by case id. */
export async function runCases(
  host: Host,
  cases: readonly Case[],
  o: { env?: Record<string, string>; runId: string },
): Promise<{ results: Map<string, EpisodeResult>; close: () => Promise<void> }> {
  const config = configOf(testEnv({ RF_BACKOFF_MS: '100', ...o.env }));
  const pipeline = openPipeline(config);
  const templates = new Map<Runner, Episode>();
  for (const runner of ['unittest', 'pytest', 'django-style'] as const) templates.set(runner, await calcAdd(runner));
  const episodes = cases.map((c) => {
    const template = templates.get(c.runner)!;
    return {
      ...template,
      run_id: o.runId,
      episode_id: c.id,
      trajectory: c.trajectory,
      eval: { ...template.eval!, ...c.eval },
    };
  });
  await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: o.runId, episodes });
  const worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 4 });
  const results = new Map<string, EpisodeResult>();
  for (const result of await collectResults(pipeline, o.runId, episodes.length)) results.set(result.episode_id, result);
  return {
    results,
    close: async () => {
      await worker.close();
      await pipeline.close();
    },
  };
}

/** The codes of a result's integrity findings. */
export const findingCodes = (r: EpisodeResult | undefined): string[] =>
  (r?.grading?.integrity?.findings ?? []).map((f) => f.code);
