/**
 * One run of adversarial-corpus episodes (test/adversarial/) through the real pipeline: a vefaas-local host with
 * the corpus images (pyutils, pyrepo), real Redis, the default configuration (fresh-sandbox grading,
 * RF_INTEGRITY=strict), one worker; results by episode id.
 */
import { EpisodeSchema, type Episode, type EpisodeInput, type EpisodeResult } from '@rollout-fleet/shared';
import { submitRun } from '@rollout-fleet/producer';
import { startWorker } from '@rollout-fleet/worker';
import { corpusImages, type CorpusImages } from '@rollout-fleet/test-kit/adversarial-cases';
import {
  IMAGES_DIR,
  collectResults,
  configOf,
  openPipeline,
  silentLogger,
  startHost,
  testEnv,
  type Host,
} from './pipeline-harness.js';

/** An episode of the corpus: schema input without its run id (the run gives it). */
export type CorpusEpisode = Omit<EpisodeInput, 'run_id'>;

export interface CorpusRun {
  results: Map<string, EpisodeResult>;
  images: CorpusImages;
  close(): Promise<void>;
}

/** Episodes are schema input (defaults applied here); `build` gets the images (for pyrepo's test patch). */
export async function runCorpus(
  runId: string,
  build: (images: CorpusImages) => CorpusEpisode[],
  env: Record<string, string> = {},
): Promise<CorpusRun> {
  const images = corpusImages(IMAGES_DIR);
  const host: Host = await startHost({ imagesDir: images.imagesDir });
  const config = configOf(testEnv({ RF_BACKOFF_MS: '100', ...env }));
  const pipeline = openPipeline(config);
  const episodes: Episode[] = build(images).map((input) => EpisodeSchema.parse({ ...input, run_id: runId }));
  await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId, episodes });
  const worker = await startWorker({ config, target: host.target, logger: silentLogger, concurrency: 4 });
  const results = new Map<string, EpisodeResult>();
  for (const result of await collectResults(pipeline, runId, episodes.length)) results.set(result.episode_id, result);
  return {
    results,
    images,
    close: async () => {
      await worker.close();
      await pipeline.close();
      await host.close();
      images.close();
    },
  };
}
