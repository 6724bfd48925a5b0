import type { EpisodeInput } from '@rollout-fleet/shared';
import type { Problem, RecordLocation } from '../validation/problem.js';

/** One input file as read by the caller (the importers never touch the file system). */
export interface InputFile {
  /** Shown in problems; its extension and stem drive format detection and id derivation. */
  path: string;
  text: string;
}

export type SandboxInput = EpisodeInput['sandbox'];
export type ToolCallInput = NonNullable<EpisodeInput['trajectory']>[number];
export type EvalInput = NonNullable<EpisodeInput['eval']>;

/** Options every importer takes. */
export interface ImportOptions {
  /** Run id given to records that carry none. */
  runId: string;
  /**
   * Sandbox image for records that carry none. A record's own image (native `sandbox.image`, SWE-bench v5
   * `image_name`) wins over it.
   */
  image?: string;
  /**
   * Used when neither the record nor `image` names an image; placeholders as in {@link imageForInstance}, e.g.
   * `swebench/sweb.eval.x86_64.{instance_id_1776}:latest`.
   */
  imageTemplate?: string;
  /** Other sandbox defaults (port, cpu_milli, env, ...), applied under a record's own values. */
  sandbox?: Partial<Omit<SandboxInput, 'image'>>;
  /**
   * Samples per source record: each record becomes `sample_index` 0..samples-1 under one episode id.
   * Records that state their own `sample_index` are taken as they are.
   * @defaultValue 1
   */
  samples?: number;
  /** Instance id for single-episode files (`.traj`, one messages file); default: the file stem. */
  instanceId?: string;
  /**
   * Where the repository sits in the sandbox, over what a record says or the importer infers (e.g. replaying
   * recordings made at `/<owner>__<repo>` on SWE-bench images that keep it at /testbed).
   */
  repoDir?: string;
  /**
   * Replay the recorded actions (default). `false`: grade what the recording submitted (SWE-agent / mini-swe-agent
   * `info.submission`) without replaying anything.
   */
  replay?: boolean;
}

export interface ImportResult {
  /** Episodes that passed EpisodeSchema (defaults not yet applied). */
  episodes: EpisodeInput[];
  /** `locations[i]` is where `episodes[i]` came from. */
  locations: RecordLocation[];
  problems: Problem[];
}

export type Importer = (file: InputFile, options: ImportOptions) => ImportResult;

export function emptyResult(): ImportResult {
  return { episodes: [], locations: [], problems: [] };
}

export function mergeInto(target: ImportResult, source: ImportResult): void {
  target.episodes.push(...source.episodes);
  target.locations.push(...source.locations);
  target.problems.push(...source.problems);
}
