/**
 * The SWE-agent trajectories of the shared data (swe-agent/, read in place) replayed end to end — importer → Redis → worker →
 * vefaas-local (bubblewrap; the example images mount the repository where SWE-agent had it) — with the windowed
 * tools, and their fidelity asserted: every recorded observation matches after normalisation, except the ones
 * docs/fidelity.md explains; and mini-swe-agent trajectories (both forms), each action in a fresh shell.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EpisodeResultSchema, EpisodeSchema, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { bwrapNeed } from '@rollout-fleet/test-kit/bwrap-need';
import { describeWith, systemProgramNeed } from '@rollout-fleet/test-kit/needs';
import { sharedDataNeed, sharedDataPath } from '@rollout-fleet/test-kit/shared-data';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  ROOT,
  collectResults,
  configOf,
  openPipeline,
  runCli,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const RUN = 'fidelity-e2e';
/** SWE-agent's own files from the shared data; mini-swe-agent's written here (test/fixtures/). */
const pathOf = (name: string): string =>
  name.startsWith('swe-agent/') ? sharedDataPath(name) : `${ROOT}test/fixtures/${name}`;
/** Trajectory → the example image reproducing what it saw. */
const TRAJECTORIES: Record<string, string> = {
  'swe-agent/6e44b9__sweagenttestrepo-1c2844.traj': 'swe-agent-test-repo',
  'swe-agent/function_calling_simple.traj': 'swe-agent-test-repo',
  'swe-agent/str_replace_anthropic_demo.yaml': 'swe-agent-test-repo-demo',
  'mini-swe-agent/text-mode.traj.json': 'pyutils',
  'mini-swe-agent/tool-calls.traj.json': 'pyutils',
};

// Sandboxes under bubblewrap see the host's /usr only: the recorded runs call `python`.
describeWith(
  [bwrapNeed(), systemProgramNeed('python', 'python-is-python3'), sharedDataNeed('swe-agent')],
  'replay fidelity end to end',
  () => {
    let host: Host;
    let pipeline: Pipeline;
    let worker: RunningWorker;
    const env = testEnv();
    const results = new Map<string, EpisodeResult>();

    beforeAll(async () => {
      host = await startHost();
      pipeline = openPipeline(configOf(env));
      const episodes = [];
      for (const [name, image] of Object.entries(TRAJECTORIES)) {
        const validated = validateInputs([{ path: pathOf(name), text: await readFile(pathOf(name), 'utf8') }], {
          runId: RUN,
          image,
        });
        expect(validated.problems).toEqual([]);
        episodes.push(...validated.episodes);
      }
      // An episode whose repository is not where the image keeps it: an input failure, never retried.
      episodes.push(
        EpisodeSchema.parse({
          ...episodes[0],
          episode_id: 'wrong-repo-dir',
          instance_id: 'wrong-repo-dir',
          repo_dir: '/nowhere',
        }),
      );
      await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: RUN, episodes });
      worker = await startWorker({
        config: pipeline.config,
        target: host.target,
        logger: silentLogger,
        concurrency: 3,
        workerId: 'fidelity-w1',
      });
      for (const result of await collectResults(pipeline, RUN, episodes.length))
        results.set(result.instance_id, result);
    });

    afterAll(async () => {
      await worker?.close();
      await pipeline?.close();
      await host?.close();
    });

    describe('SWE-agent trajectories replayed with their recorded tools', () => {
      it('replays the v1 run (windowed tools at /SWE-agent__test-repo); only the documented edit message differs', () => {
        const result = results.get('6e44b9__sweagenttestrepo-1c2844')!;
        expect(EpisodeResultSchema.parse(result)).toBeTruthy();
        expect(result.status).toBe('completed');
        expect(result.steps.map((s) => s.command)).toEqual([
          'find_file missing_colon.py',
          'open "/SWE-agent__test-repo/tests/missing_colon.py"',
          "edit 'def division(a: float, b: float) -> float' 'def division(a: float, b: float) -> float:' False",
          'python3 /SWE-agent__test-repo/tests/missing_colon.py',
          'submit',
        ]);
        expect(result.fidelity).toMatchObject({
          compared: 5,
          matched: 4,
          differed: 1,
          no_record: 0,
          first_divergence: 2,
          ratio: 0.8,
        });
        // docs/fidelity.md: a development build before SWE-agent 8917167e printed a two-line success message; the
        // window after it, the edit itself and everything later match.
        const diff = result
          .fidelity!.steps[2]!.diff!.split('\n')
          .filter((line) => /^[-+][^-+]/.test(line) || /^[-+]$/.test(line));
        expect(diff).toEqual([
          '-Replaced 1 occurrences. Please review the changes and make sure they are correct',
          '-(correct indentation, no duplicate lines, etc). Edit the file again if necessary.',
          '+Replaced 1 occurrences. Please review the changes and make sure they are correct:',
          '+',
          '+1. The edited file is correctly indented',
          '+2. The edited file does not contain duplicate lines',
          '+3. The edit does not break existing functionality',
          '+',
          '+Edit the file again if necessary.',
        ]);
        // The replayed submit printed the recorded patch, blob ids and mode included.
        expect(result.steps[4]!.output).toContain('index 20edef5..5857437 100755');
        expect(result.fidelity!.steps[4]).toMatchObject({ verdict: 'match' });
      });

      it('replays the function-calling demonstration (history only, footers stripped): every observation matches', () => {
        const result = results.get('function_calling_simple')!;
        expect(result.status).toBe('completed');
        expect(result.steps.map((s) => s.tool)).toEqual(['find_file', 'open', 'edit', 'bash', 'submit']);
        expect(result.fidelity).toMatchObject({ compared: 5, matched: 5, differed: 0, ratio: 1 });
        expect(result.fidelity!.steps.flatMap((s) => s.rules ?? [])).toContain('template');
      });

      it('replays the str_replace_editor demonstration; only the documented snippet difference remains', () => {
        const result = results.get('str_replace_anthropic_demo')!;
        expect(result.status).toBe('completed');
        expect(result.fidelity).toMatchObject({
          compared: 4,
          matched: 3,
          differed: 1,
          first_divergence: 2,
          ratio: 0.75,
        });
        const differs = result.fidelity!.steps[2]!;
        expect(differs.verdict).toBe('differs');
        // docs/fidelity.md: the recording's older editor showed one more line after the edit (line 8).
        expect(differs.diff).toContain('-     8\tif __name__ == "__main__":');
        expect(differs.diff!.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++'))).toEqual([]);
      });
    });

    describe('repo_dir', () => {
      it('fails an episode whose repo_dir is not in the image as an input error, after one attempt', () => {
        const result = results.get('wrong-repo-dir')!;
        expect(result).toMatchObject({
          status: 'failed',
          reward: null,
          failure: { code: 'REPO_DIR_MISSING', class: 'input' },
        });
        expect(result.failure!.message).toMatch(/^repo_dir \/nowhere is not a directory in this sandbox/);
        expect(result.attempts).toHaveLength(1);
      });
    });

    describe('mini-swe-agent trajectories replayed', () => {
      it('runs each action in a fresh bash in the repository and matches return codes and outputs', () => {
        const text = results.get('text-mode')!;
        expect(text.status).toBe('completed');
        // `cd /tmp` did not carry over: the next `pwd` printed /testbed, as recorded.
        expect(text.fidelity).toMatchObject({ compared: 4, matched: 4, differed: 0, no_record: 1, ratio: 1 });
        expect(text.steps[3]).toMatchObject({ exit_code: 2 });
        expect(text.fidelity!.steps[0]!.rules).toContain('mini-output');
        const tools = results.get('tool-calls')!;
        expect(tools.fidelity).toMatchObject({ compared: 3, matched: 3, no_record: 1, ratio: 1 });
      });
    });

    describe('per-run figures', () => {
      // Replayed episodes (something compared): the three SWE-agent ones and the two mini-swe-agent ones.
      it('status: the share replayed without divergence, matched steps, where the first divergences were', async () => {
        const status = await runCli(['status', '--run', RUN], env);
        expect(status.code).toBe(0);
        expect(status.stdout).toContain(
          '  fidelity 3/5 replayed without divergence (60.0%)  steps matched 19/21 (90.5%)\n',
        );
        expect(status.stdout).toContain('  first divergence at step 2: 2\n');
        const json = JSON.parse((await runCli(['status', '--run', RUN, '--json'], env)).stdout) as {
          fidelity: { firstDivergence: Record<string, number> };
        };
        expect(json.fidelity).toMatchObject({
          replayed: 5,
          clean: 3,
          stepsCompared: 21,
          stepsMatched: 19,
          firstDivergence: { none: 3, '2': 2 },
        });
      });

      it('results --format fidelity: one row per episode and the run total', async () => {
        const table = await runCli(['results', '--run', RUN, '--format', 'fidelity'], env);
        expect(table.code).toBe(0);
        const lines = table.stdout.trimEnd().split('\n');
        expect(lines[0]).toMatch(
          /^instance\s+sample\s+status\s+steps\s+compared\s+matched\s+differs\s+fidelity\s+first divergence$/,
        );
        const row = (instance: string): string => lines.find((line) => line.startsWith(`${instance} `)) ?? '';
        expect(row('6e44b9__sweagenttestrepo-1c2844')).toMatch(
          /\s0\s+completed\s+5\s+5\s+4\s+1\s+80\.0%\s+step 2: edit 'def division/,
        );
        expect(row('function_calling_simple')).toMatch(/\s0\s+completed\s+5\s+5\s+5\s+0\s+100\.0%\s+-$/);
        expect(row('wrong-repo-dir')).toMatch(/failed\s+0\s+-\s+-\s+-\s+-\s+\(failed: REPO_DIR_MISSING\)$/);
        expect(lines).toHaveLength(1 + 6 + 1);
        expect(lines.at(-1)).toBe(
          `run ${RUN}: 3/5 replayed episodes without divergence (60.0%), 19/21 steps matched (90.5%)`,
        );
      });
    });
  },
);
