import type { EpisodeInput, PolicyInput } from '@rollout-fleet/shared';
import { formatLocation, problemAt, type RecordLocation } from '../validation/problem.js';
import { imageForInstance, imageTemplateError } from './image-template.js';
import { checkEpisode } from './schema-problems.js';
import { emptyResult, type EvalInput, type ImportOptions, type ImportResult, type ToolCallInput } from './types.js';

const MAX_ID_LENGTH = 200;

/**
 * Episode id from an instance id or file stem: characters outside the id alphabet (IdSchema) become `_`, so any
 * stem yields a usable id; SWE-bench ids (`django__django-11099`) pass through unchanged.
 */
export function episodeIdFor(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._@+\-/]/g, '_').slice(0, MAX_ID_LENGTH);
  return cleaned === '' ? '_' : cleaned;
}

export function sampleCount(options: ImportOptions): number {
  const samples = options.samples ?? 1;
  return Number.isInteger(samples) && samples >= 1 ? samples : 1;
}

/**
 * Image precedence: the record's own image, then `options.image`, then `options.imageTemplate` filled for the
 * instance. Undefined when none applies (EpisodeSchema then reports `sandbox.image` as missing, with the hint).
 */
export function resolveImage(
  instanceId: string,
  recordImage: string | undefined,
  options: ImportOptions,
): string | undefined {
  if (recordImage !== undefined && recordImage !== '') return recordImage;
  if (options.image !== undefined && options.image !== '') return options.image;
  if (options.imageTemplate !== undefined && imageTemplateError(options.imageTemplate) === undefined) {
    return imageForInstance(instanceId, options.imageTemplate);
  }
  return undefined;
}

/** The record's sandbox fields over the option defaults, with the image resolved. */
export function sandboxFor(
  instanceId: string,
  recordSandbox: Record<string, unknown> | undefined,
  options: ImportOptions,
): Record<string, unknown> {
  const recordImage = typeof recordSandbox?.['image'] === 'string' ? recordSandbox['image'] : undefined;
  const sandbox: Record<string, unknown> = { ...options.sandbox, ...recordSandbox };
  const image = resolveImage(instanceId, recordImage, options);
  if (image !== undefined) sandbox['image'] = image;
  return sandbox;
}

/**
 * One episode per source record, `samples` times: sample_index 0..N-1 under the same episode id. A record that
 * names its own sample_index is one specific sample and is not expanded.
 */
export function expandSamples(episode: EpisodeInput, options: ImportOptions): EpisodeInput[] {
  if (episode.sample_index !== undefined) return [episode];
  return Array.from({ length: sampleCount(options) }, (_unused, index) => ({ ...episode, sample_index: index }));
}

/** What a non-native importer extracted from one record, before ids, sandbox and samples are settled. */
export interface EpisodeDraft {
  instanceId: string;
  /** Default: derived from instanceId. */
  episodeId?: string;
  runId?: string;
  sampleIndex?: number;
  /** An image named by the record itself (e.g. SWE-bench v5 `image_name`). */
  recordImage?: string;
  trajectory: ToolCallInput[];
  /** Omitted = the worker grades the sandbox's own `git diff`. */
  modelPatch?: string | null;
  eval?: EvalInput;
  /** The task as a policy reads it (SWE-bench `problem_statement`). */
  problemStatement?: string;
  /** A policy block: the model chooses the actions (after `trajectory`, if any). */
  policy?: PolicyInput;
  metadata: Record<string, string>;
  /** Where the repository sat when the record was made; default: the episode's own default (/testbed). */
  repoDir?: string;
  /** The agent tool bundle the record was made with. */
  toolBundle?: EpisodeInput['tool_bundle'];
}

/** Settles ids, sandbox and samples for a draft and checks the result against EpisodeSchema. */
export function buildEpisodes(draft: EpisodeDraft, location: RecordLocation, options: ImportOptions): ImportResult {
  const result = emptyResult();
  if (options.imageTemplate !== undefined) {
    const templateError = imageTemplateError(options.imageTemplate);
    if (templateError !== undefined) {
      result.problems.push(
        problemAt(location, { field: 'sandbox.image', message: templateError, hint: 'fix --image-template' }),
      );
      return result;
    }
  }
  const candidate: Record<string, unknown> = {
    run_id: draft.runId ?? options.runId,
    episode_id: draft.episodeId ?? episodeIdFor(draft.instanceId),
    instance_id: draft.instanceId,
    sandbox: sandboxFor(
      draft.instanceId,
      draft.recordImage === undefined ? undefined : { image: draft.recordImage },
      options,
    ),
    trajectory: draft.trajectory,
    metadata: { source: formatLocation(location), ...draft.metadata },
  };
  if (draft.sampleIndex !== undefined) candidate['sample_index'] = draft.sampleIndex;
  if (draft.eval !== undefined) candidate['eval'] = draft.eval;
  if (draft.modelPatch !== undefined) candidate['model_patch'] = draft.modelPatch;
  if (draft.problemStatement !== undefined) candidate['problem_statement'] = draft.problemStatement;
  if (draft.policy !== undefined) candidate['policy'] = draft.policy;
  const repoDir = options.repoDir ?? draft.repoDir;
  if (repoDir !== undefined) candidate['repo_dir'] = repoDir;
  if (draft.toolBundle !== undefined) candidate['tool_bundle'] = draft.toolBundle;
  return finishEpisode(candidate, location, options);
}

/** Schema check plus sample expansion, shared by every importer. */
export function finishEpisode(candidate: unknown, location: RecordLocation, options: ImportOptions): ImportResult {
  const result = emptyResult();
  const checked = checkEpisode(candidate, location);
  if (!checked.ok) {
    result.problems.push(...checked.problems);
    return result;
  }
  for (const episode of expandSamples(checked.episode, options)) {
    result.episodes.push(episode);
    result.locations.push(location);
  }
  return result;
}
