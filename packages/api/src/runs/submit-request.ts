/**
 * A submission as the API receives it → the producer's own validation and enqueue, exactly as
 * `rollout-fleet submit` does it: every input validated first, problems returned with their file / line /
 * field, nothing enqueued unless all of it is valid, and idempotent (job id = run + episode + sample).
 */
import type { Queue } from 'bullmq';
import { problemsToError, samplingWarnings, submitRun, validateInputs, type InputFile } from '@rollout-fleet/producer';
import {
  RolloutError,
  announceDemand,
  announcementWarning,
  readWarmPoolCapacity,
  type Config,
  type EpisodeJobData,
  type Keyspace,
  type RedisClient,
} from '@rollout-fleet/shared';
import type { SubmitOptions, SubmitRequest, SubmitResponse } from '../contracts/run-contracts.js';

/** Name native `episodes` records are cited by in problems (`episodes:$[3]`). */
export const EPISODES_FILE = 'episodes';
/** Name a JSONL request body is cited by in problems (`request.jsonl:12`). */
export const BODY_FILE = 'request.jsonl';
/** Name a policy block given as an object is cited by in problems. */
export const POLICY_FILE = 'policy.json';

export interface SubmitDeps {
  config: Config;
  redis: RedisClient;
  keys: Keyspace;
  queue: Queue<EpisodeJobData>;
}

/** The input files of a JSON submission: native records first, then files, then predictions (as the CLI orders them). */
export function inputFilesOf(body: SubmitRequest): InputFile[] {
  return [
    ...(body.episodes && body.episodes.length > 0
      ? [{ path: EPISODES_FILE, text: JSON.stringify(body.episodes) }]
      : []),
    ...(body.files ?? []).map((f) => ({ path: f.name, text: f.content })),
    ...(body.predictions ?? []).map((f) => ({ path: f.name, text: f.content })),
  ];
}

/** The policy block of a JSON submission as the file `submit --policy` would read, if there is one. */
export function policyFileOf(body: SubmitRequest): InputFile | undefined {
  const { policy } = body;
  if (policy === undefined) return undefined;
  const isFile =
    typeof policy.name === 'string' && typeof policy.content === 'string' && Object.keys(policy).length === 2;
  return isFile
    ? { path: String(policy.name), text: String(policy.content) }
    : { path: POLICY_FILE, text: JSON.stringify(policy) };
}

export async function submitFiles(
  deps: SubmitDeps,
  files: InputFile[],
  options: SubmitOptions,
  policyFile?: InputFile,
): Promise<SubmitResponse> {
  const { config } = deps;
  const image = options.image ?? config.sandbox.image;
  const validated = validateInputs(files, {
    runId: options.run_id,
    samples: options.samples,
    gold: options.gold,
    ...(image ? { image } : {}),
    ...(options.image_template ? { imageTemplate: options.image_template } : {}),
    ...(options.instance ? { instanceId: options.instance } : {}),
    ...(options.test_command ? { testCommand: options.test_command } : {}),
    ...(options.format ? { format: options.format } : {}),
    ...(policyFile ? { policyFile } : {}),
  });
  if (validated.problems.length > 0) {
    const err = problemsToError(validated.problems);
    throw new RolloutError(
      err.code,
      `${validated.problems.length} problem(s) in ${files.length} input(s); nothing was enqueued`,
      { details: err.details },
    );
  }
  const response = {
    run_id: options.run_id,
    episodes: validated.episodes.length,
    dry_run: options.dry_run,
    warnings: samplingWarnings(validated.episodes),
  };
  if (options.dry_run) return { ...response, enqueued: 0, skipped_done: 0, skipped_queued: 0 };
  if (options.announce) {
    const announced = await announceDemand({
      redis: deps.redis,
      keys: deps.keys,
      runId: options.run_id,
      episodes: validated.episodes,
      ttlS: options.announce_ttl_s,
    });
    // Said, not refused: the announcement stands and a worker started later fills for it (as `submit --announce`).
    const capacity = await readWarmPoolCapacity({ redis: deps.redis, keys: deps.keys });
    const warning = announcementWarning(capacity);
    return {
      ...response,
      enqueued: 0,
      skipped_done: 0,
      skipped_queued: 0,
      announced: {
        ...announced,
        live_workers: capacity.liveWorkers,
        warm_pool_workers: capacity.warmWorkers,
        warm_pool_max: capacity.warmPoolMax,
        ...(warning === undefined ? {} : { warning }),
      },
    };
  }
  const summary = await submitRun({
    queue: deps.queue,
    redis: deps.redis,
    keys: deps.keys,
    runId: options.run_id,
    episodes: validated.episodes,
    datasetInstanceIds: validated.datasetInstanceIds,
    force: options.force,
    resume: options.resume,
    policy: {
      attempts: config.worker.attempts,
      backoffMs: config.worker.backoffMs,
      retentionS: config.worker.resultRetentionDays * 86_400,
    },
  });
  return {
    ...response,
    enqueued: summary.enqueued,
    skipped_done: summary.skippedDone,
    skipped_queued: summary.skippedQueued,
  };
}
