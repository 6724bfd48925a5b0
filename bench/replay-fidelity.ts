/**
 * Replay fidelity of the shared SWE-agent trajectories (../shared/data/swe-agent): how many recorded observations
 * the replay reproduces, after the normalisation of docs/fidelity.md.
 *
 *   npm run bench:fidelity                      replay them now (vefaas-local + Redis + a worker in this process)
 *   npm run bench:fidelity -- --score F.jsonl   score results some other version produced (`rollout-fleet results
 *                                               --run R > F.jsonl`), e.g. the code before replay fidelity existed
 *
 * Scoring compares result step i with the recorded observation of step i of the trajectory as imported today
 * (same comparison as the worker's, the agent's view taken from the step's output); a recorded step the result
 * never replayed counts as differing.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compareStep, recordingFormatFor, summariseFidelity, sweAgentObservation } from '@rollout-fleet/worker';
import {
  EpisodeResultSchema,
  type Episode,
  type EpisodeResult,
  type Fidelity,
  type FidelityStep,
} from '@rollout-fleet/shared';
import { validateInputs } from '@rollout-fleet/producer';
import { openBenchFleet } from './lib/bench-fleet.js';

// The shared data beside the checkout (../shared/data), read in place, or $ROLLOUT_FLEET_SHARED_DATA.
const sharedData =
  process.env.ROLLOUT_FLEET_SHARED_DATA || fileURLToPath(new URL('../../shared/data', import.meta.url));
/** Each shared trajectory and the example image reproducing what it saw. */
export const TRAJECTORIES: ReadonlyArray<{ file: string; image: string }> = [
  { file: 'swe-agent/6e44b9__sweagenttestrepo-1c2844.traj', image: 'swe-agent-test-repo' },
  { file: 'swe-agent/function_calling_simple.traj', image: 'swe-agent-test-repo' },
  { file: 'swe-agent/str_replace_anthropic_demo.yaml', image: 'swe-agent-test-repo-demo' },
];

async function importAll(runId: string): Promise<Episode[]> {
  const episodes: Episode[] = [];
  for (const { file, image } of TRAJECTORIES) {
    const validated = validateInputs(
      [{ path: join(sharedData, file), text: await readFile(join(sharedData, file), 'utf8') }],
      { runId, image },
    );
    if (validated.problems.length > 0) throw new Error(`cannot import ${file}: ${JSON.stringify(validated.problems)}`);
    episodes.push(...validated.episodes);
  }
  return episodes;
}

/** A result from any version, scored against today's import of its trajectory. */
function score(episode: Episode, result: EpisodeResult | undefined): Fidelity {
  const format = recordingFormatFor(episode.tool_bundle);
  const verdicts: FidelityStep[] = episode.trajectory.map((call, index) => {
    const step = result?.steps[index];
    if (step === undefined) {
      return call.observation === undefined
        ? { index, verdict: 'no_record' }
        : { index, verdict: 'differs', diff: '(not replayed)' };
    }
    const view =
      episode.tool_bundle?.name === 'swe-agent'
        ? sweAgentObservation(step.output, episode.tool_bundle)
        : { text: step.output, rules: [] };
    return compareStep(
      { index, recorded: call.observation, replayed: view.text, agentRules: view.rules, exitCode: step.exit_code },
      { format },
    );
  });
  return summariseFidelity(verdicts);
}

function table(rows: ReadonlyArray<{ name: string; fidelity: Fidelity | undefined; status: string }>): string {
  const lines = [`${'trajectory'.padEnd(40)} ${'status'.padEnd(10)} recorded  matched  fidelity  first divergence`];
  for (const { name, fidelity, status } of rows) {
    const f = fidelity;
    lines.push(
      `${name.padEnd(40)} ${status.padEnd(10)} ${String(f?.compared ?? '-').padStart(8)} ${String(f?.matched ?? '-').padStart(8)} ` +
        `${(f?.ratio === null || f?.ratio === undefined ? '-' : `${(f.ratio * 100).toFixed(1)}%`).padStart(9)}  ${f?.first_divergence ?? '-'}`,
    );
  }
  return lines.join('\n');
}

async function scoreFile(path: string): Promise<void> {
  const results = (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => EpisodeResultSchema.parse(JSON.parse(line)));
  const episodes = await importAll('score');
  const rows = episodes.map((episode) => {
    const result = results.find((r) => r.instance_id === episode.instance_id);
    return { name: episode.instance_id, status: result?.status ?? 'missing', fidelity: score(episode, result) };
  });
  console.log(table(rows));
  console.log(`\nscored ${path} against today's import of each trajectory (npm run bench:fidelity -- --score ${path})`);
}

async function replayNow(): Promise<void> {
  const fleet = await openBenchFleet({ isolation: 'bwrap' });
  try {
    const runId = `fidelity-${Date.now()}`;
    const episodes = await importAll(runId);
    await fleet.startWorkers({ count: 1, concurrency: 3, processes: false });
    const outcome = await fleet.submitAndWait({ runId, episodes, timeoutMs: 180_000 });
    const rows = episodes.map((episode) => {
      const result = outcome.results.find((r) => r.instance_id === episode.instance_id);
      return { name: episode.instance_id, status: result?.status ?? 'missing', fidelity: result?.fidelity };
    });
    console.log(table(rows));
    for (const { name, fidelity } of rows) {
      for (const step of fidelity?.steps.filter((s) => s.verdict === 'differs') ?? [])
        console.log(`\n${name} step ${step.index} differs:\n${step.diff ?? ''}`);
    }
    console.log(
      '\nreplayed with the windowed tools on vefaas-local (npm run bench:fidelity); differences explained in docs/fidelity.md',
    );
  } finally {
    await fleet.close();
  }
}

const { values } = parseArgs({ options: { score: { type: 'string' } } });
await (values.score === undefined ? replayNow() : scoreFile(values.score));
