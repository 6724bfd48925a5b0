/**
 * Added latency of fresh-sandbox grading (the default) over grading in the agent's own sandbox, per graded
 * episode: the examples sweep (6 graded pyutils episodes) run R times in each mode on one embedded
 * vefaas-local (real bubblewrap sandboxes), one episode at a time, the two modes interleaved pair by pair so
 * machine load hits both alike. Per (episode, round) the pair's difference of the worker's end-to-end attempt
 * time (`timings.total_ms`) is taken; the figure is the median of those differences. Also printed: the
 * grading stage alone (`timings.grade_ms`) in each mode.
 *
 * The example trajectories end before one sandbox start, so the grading sandbox, started while they run,
 * cannot be ready in time: the worst case. `--pad-steps N --pad-s S` appends N steps of `sleep S`, so the
 * last steps outlast a start, as real agent steps do, and the start hides behind them.
 *
 *   npm run bench:grading -- [--rounds 5] [--pad-steps 2 --pad-s 1]
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Queue } from 'bullmq';
import {
  ResultStore,
  createRedis,
  createKeyspace,
  createLogger,
  deleteKeysMatching,
  findRedis,
  loadConfig,
  type EpisodeJobData,
  type EpisodeResult,
  type RedisClient,
} from '@rollout-fleet/shared';
import { closeSharedDispatchers, createVefaasClient } from '@rollout-fleet/sandbox';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startVefaasLocal } from '@rollout-fleet/vefaas-local';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import { readFile } from 'node:fs/promises';
import { machineLoad, ms, quantile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    'pad-steps': { type: 'string', default: '0' },
    'pad-s': { type: 'string', default: '1' },
  },
});
const ROUNDS = Number(values.rounds);
/**
 * Steps of `sleep <pad-s>` appended to every trajectory: the example trajectories end before one sandbox start
 * (the worst case for the prefetch); padded, the last steps outlast a start, as real agent steps do.
 */
const PAD_STEPS = Number(values['pad-steps']);
const PAD_S = Number(values['pad-s']);
const root = fileURLToPath(new URL('..', import.meta.url));

interface Mode {
  name: 'fresh' | 'in-place';
  worker: RunningWorker;
  queue: Queue<EpisodeJobData>;
  /** The queue's own connection: BullMQ does not close a connection it was given. */
  queueConnection: RedisClient;
  redis: RedisClient;
  store: ResultStore;
  prefix: string;
}

async function main(): Promise<void> {
  const found = await findRedis(process.env.REDIS_URL);
  const host = await startVefaasLocal({ imagesDir: `${root}examples/images` });
  const vefaas = createVefaasClient({
    endpoint: host.controlPlaneUrl,
    region: host.region,
    credentials: { accessKeyId: host.accessKeyId, secretAccessKey: host.secretAccessKey },
  });
  const target = { vefaas, functionId: host.functionId, gatewayUrl: host.gatewayUrl };
  const logger = createLogger({ level: 'error', format: 'json', destination: process.stderr });
  const pad = Array.from({ length: PAD_STEPS }, () => ({
    name: 'execute_bash',
    arguments: { command: `sleep ${PAD_S}` },
  }));
  const sweep = validateInputs(
    [{ path: 'examples/sweep.jsonl', text: await readFile(`${root}examples/sweep.jsonl`, 'utf8') }],
    { runId: 'bench' },
  ).episodes.map((episode) => ({ ...episode, trajectory: [...episode.trajectory, ...pad] }));
  const modes: Mode[] = [];
  try {
    for (const name of ['fresh', 'in-place'] as const) {
      const prefix = `{rf-bench-${randomUUID().slice(0, 8)}}`;
      const config = loadConfig(
        {
          REDIS_URL: found.url,
          RF_PREFIX: prefix,
          RF_FRESH_EVAL: name === 'fresh' ? 'true' : 'false',
          LOG_LEVEL: 'error',
        },
        { dotenvPath: false },
      );
      const redis = createRedis(found.url);
      const queueConnection = redis.duplicate();
      const queue = new Queue<EpisodeJobData>(config.queue.name, { connection: queueConnection, prefix });
      const worker = await startWorker({ config, target, logger, concurrency: 1, workerId: `bench-${name}` });
      modes.push({
        name,
        worker,
        queue,
        queueConnection,
        redis,
        prefix,
        store: new ResultStore(redis, createKeyspace(prefix)),
      });
    }
    const padding = PAD_STEPS > 0 ? `, each with ${PAD_STEPS} more step(s) of sleep ${PAD_S}` : '';
    console.log(
      `fresh-sandbox grading vs in-place: ${sweep.length} graded episodes${padding} × ${ROUNDS} rounds, one at a time (${machineLoad()})`,
    );
    const totals = { fresh: [] as EpisodeResult[], 'in-place': [] as EpisodeResult[] };
    const added: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const episode of sweep) {
        const pair: Partial<Record<Mode['name'], EpisodeResult>> = {};
        // Alternate which mode goes first, so a warming cache or a load spike does not favour one side.
        const order = round % 2 === 0 ? modes : [...modes].reverse();
        for (const mode of order)
          pair[mode.name] = await runOne(mode, {
            ...episode,
            run_id: `r${round}`,
            episode_id: `${episode.episode_id}`,
          });
        const fresh = pair.fresh as EpisodeResult;
        const inPlace = pair['in-place'] as EpisodeResult;
        if (fresh.resolved !== inPlace.resolved)
          throw new Error(`${episode.episode_id}: fresh says ${fresh.resolved}, in-place ${inPlace.resolved}`);
        totals.fresh.push(fresh);
        totals['in-place'].push(inPlace);
        added.push(fresh.timings.total_ms - inPlace.timings.total_ms);
      }
    }
    const stage = (results: EpisodeResult[], pick: (r: EpisodeResult) => number, q: number): string =>
      ms(quantile(results.map(pick), q), 0);
    for (const name of ['fresh', 'in-place'] as const) {
      const rs = totals[name];
      console.log(
        `  ${name.padEnd(8)}  attempt total p50 ${stage(rs, (r) => r.timings.total_ms, 0.5)} p90 ${stage(rs, (r) => r.timings.total_ms, 0.9)};` +
          `  grading stage p50 ${stage(rs, (r) => r.timings.grade_ms, 0.5)} p90 ${stage(rs, (r) => r.timings.grade_ms, 0.9)}`,
      );
    }
    console.log(
      `  added latency per graded episode (paired fresh − in-place, attempt total): median ${ms(quantile(added, 0.5), 0)}, p90 ${ms(quantile(added, 0.9), 0)}`,
    );
    const flags = PAD_STEPS > 0 ? ` --pad-steps ${PAD_STEPS} --pad-s ${PAD_S}` : '';
    console.log(`  (${machineLoad()} at the end; command: npm run bench:grading -- --rounds ${ROUNDS}${flags})`);
  } finally {
    for (const mode of modes) {
      await mode.worker.close();
      await mode.queue.obliterate({ force: true }).catch(() => undefined);
      await mode.queue.close();
      mode.queueConnection.disconnect();
      await deleteKeysMatching(mode.redis, `rf:${mode.prefix}:*`);
      mode.redis.disconnect();
    }
    await vefaas.close();
    await host.close();
    await closeSharedDispatchers();
    await found.close();
  }
}

async function runOne(
  mode: Mode,
  episode: Parameters<typeof submitRun>[0]['episodes'][number],
): Promise<EpisodeResult> {
  const keys = createKeyspace(mode.prefix);
  await submitRun({ queue: mode.queue, redis: mode.redis, keys, runId: episode.run_id, episodes: [episode] });
  for await (const item of mode.store.follow(episode.run_id, { blockMs: 500, after: '0' })) {
    if (item.result.episode_id === episode.episode_id) return item.result;
  }
  throw new Error('results stream ended');
}

await main();
