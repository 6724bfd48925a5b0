import { EpisodeSchema, IdSchema, type Episode, type EpisodeInput, type PolicyInput } from '@rollout-fleet/shared';
import { detectFormat, type InputFormat } from '../importers/detect-format.js';
import { imageTemplateError } from '../importers/image-template.js';
import { importMiniSweAgent } from '../importers/mini-swe-agent.js';
import { importNativeEpisodes } from '../importers/native.js';
import { importOpenAiMessages } from '../importers/openai-messages.js';
import { readPolicyFile } from '../importers/policy-file.js';
import { checkEpisode } from '../importers/schema-problems.js';
import { importSweAgentTrajectory } from '../importers/swe-agent-traj.js';
import {
  evalSpecForInstance,
  parseSweBenchInstances,
  type LocatedInstance,
  type SweBenchInstance,
} from '../importers/swebench-dataset.js';
import { importSweBenchPolicyEpisodes } from '../importers/swebench-policy.js';
import {
  importSweBenchGold,
  importSweBenchPredictions,
  type SweBenchImportOptions,
} from '../importers/swebench-predictions.js';
import { emptyResult, mergeInto, type ImportOptions, type ImportResult, type InputFile } from '../importers/types.js';
import { emptyTestListsProblem } from './eval-lists.js';
import { formatLocation, problemAt, type Problem, type RecordLocation } from './problem.js';

const KIB = 1024;
const MIB = 1024 * KIB;

export interface ValidationOptions extends ImportOptions {
  /** Largest accepted episode, in UTF-8 bytes of its JSON (defaults applied). @defaultValue 1 MiB */
  maxEpisodeBytes?: number;
  /** Most trajectory steps per episode. @defaultValue 1000 */
  maxSteps?: number;
  /** Also grade every dataset instance with its own gold `patch` (SWE-bench's `gold` predictions). */
  gold?: boolean;
  /** Replaces the per-repo SWE-bench test command in eval specs built from a dataset. */
  testCommand?: string;
  /** Read every file as this format instead of detecting it. */
  format?: InputFormat;
  /**
   * A policy block (`submit --policy FILE`) for every episode that has none: the model chooses the actions (after
   * an imported trajectory's). Dataset instances without an episode of their own become policy episodes.
   */
  policyFile?: InputFile;
}

export const DEFAULT_MAX_EPISODE_BYTES = 1 * MIB;
export const DEFAULT_MAX_STEPS = 1000;

export interface ValidationResult {
  /** Episodes that passed every check, defaults applied. Enqueue them only when `problems` is empty. */
  episodes: Episode[];
  /** `locations[i]` is where `episodes[i]` came from. */
  locations: RecordLocation[];
  problems: Problem[];
  /** Worth telling, not refusing (a duplicated dataset instance: the later record is used). */
  warnings: Problem[];
  /**
   * Every instance id of the SWE-bench dataset files, once each, in file order: the run's dataset, which
   * SWE-bench's run report counts over (`total_instances`, `incomplete_ids`). Empty without a dataset file.
   */
  datasetInstanceIds: string[];
}

const OPTIONS_FILE = '(options)';

/**
 * Reads every input with the importer for its format, then checks the whole set: schema, sizes, and unique
 * (run_id, episode_id, sample_index) across files. Never throws for bad input; everything wrong is a Problem.
 *
 * SWE-bench dataset files are read first and serve two purposes: predictions files are joined with them, and
 * any imported episode without an eval spec whose instance id is in a dataset gets the instance's eval spec.
 */
export function validateInputs(files: readonly InputFile[], options: ValidationOptions): ValidationResult {
  const optionProblems = checkOptions(options);
  if (optionProblems.length > 0) return { ...nothing(), problems: optionProblems };

  const imported = emptyResult();
  let policy: PolicyInput | undefined;
  if (options.policyFile !== undefined) {
    const read = readPolicyFile(options.policyFile);
    if (read.problems.length > 0) return { ...nothing(), problems: read.problems };
    policy = read.policy;
  }
  const formats = new Map<InputFile, InputFormat>();
  for (const file of files) {
    const detected = options.format === undefined ? detectFormat(file) : { ok: true as const, format: options.format };
    if (detected.ok) formats.set(file, detected.format);
    else imported.problems.push(detected.problem);
  }

  const datasetInstances: LocatedInstance[] = [];
  const instances = new Map<string, SweBenchInstance>();
  const warnings: Problem[] = [];
  const positions = new Map<string, number>();
  /**
   * SWE-bench keys the dataset by instance_id, so a later record of an id replaces the earlier one (it keeps the
   * earlier one's place in the order): said as a warning naming both places, unless the two are the same record.
   */
  const addInstance = (located: LocatedInstance): void => {
    const id = located.instance.instance_id;
    const at = positions.get(id);
    const earlier = at === undefined ? undefined : datasetInstances[at];
    if (at === undefined || earlier === undefined) {
      positions.set(id, datasetInstances.length);
      datasetInstances.push(located);
      instances.set(id, located.instance);
      return;
    }
    if (earlier.source === located.source) return;
    warnings.push(
      problemAt(located.location, {
        field: 'instance_id',
        message: `instance "${id}" is also defined at ${formatLocation(earlier.location)}, differently; this later record is used`,
        hint: 'SWE-bench keeps the last record of an instance id; remove the one you do not mean',
        code: 'INPUT_DUPLICATE',
      }),
    );
    datasetInstances[at] = located;
    instances.set(id, located.instance);
  };
  for (const [file, format] of formats) {
    if (format !== 'swebench-dataset') continue;
    const parsed = parseSweBenchInstances(file);
    imported.problems.push(...parsed.problems);
    if (parsed.instances.length === 0 && parsed.problems.length === 0) {
      imported.problems.push(
        problemAt(
          { file: file.path },
          { message: 'no instances in this file', hint: 'remove it from the inputs or add SWE-bench instances' },
        ),
      );
    }
    for (const located of parsed.instances) addInstance(located);
  }

  const sweBenchOptions: SweBenchImportOptions = { ...options, instances };
  for (const [file, format] of formats) {
    if (format === 'swebench-dataset') continue;
    const result = importFile(file, format, sweBenchOptions);
    if (result.episodes.length === 0 && result.problems.length === 0) {
      result.problems.push(
        problemAt(
          { file: file.path },
          { message: 'no episodes in this file', hint: 'remove it from the inputs or add records' },
        ),
      );
    }
    mergeInto(imported, result);
  }
  if (policy !== undefined) attachPolicy(imported, policy, datasetInstances, sweBenchOptions);
  if (options.gold === true) {
    if (datasetInstances.length === 0) {
      imported.problems.push(
        problemAt(
          { file: OPTIONS_FILE },
          { field: 'gold', message: 'gold predictions need a SWE-bench dataset', hint: 'pass the dataset file too' },
        ),
      );
    }
    mergeInto(imported, importSweBenchGold(datasetInstances, sweBenchOptions));
  }

  const datasetFile = [...formats].find(([, format]) => format === 'swebench-dataset')?.[0];
  if (datasetFile !== undefined && imported.episodes.length === 0 && imported.problems.length === 0) {
    // A dataset says how to grade, not what: alone it would be a run of nothing.
    imported.problems.push(
      problemAt(
        { file: datasetFile.path },
        {
          message: 'a SWE-bench dataset alone makes no episodes',
          hint: 'pass predictions to grade (--predictions preds.json), --gold, or trajectories of its instances',
        },
      ),
    );
  }
  return {
    ...checkAll(imported, { options, instances }),
    warnings,
    datasetInstanceIds: datasetInstances.map((located) => located.instance.instance_id),
  };
}

function nothing(): ValidationResult {
  return { episodes: [], locations: [], problems: [], warnings: [], datasetInstanceIds: [] };
}

/**
 * `--policy`: episodes without a policy block get this one; dataset instances that no other input covers become
 * policy episodes. A record that grades a given patch cannot also be written by a model: reported, not dropped.
 */
function attachPolicy(
  imported: ImportResult,
  policy: PolicyInput,
  instances: readonly LocatedInstance[],
  options: SweBenchImportOptions,
): void {
  const covered = new Set<string>();
  const episodes: EpisodeInput[] = [];
  const locations: RecordLocation[] = [];
  imported.episodes.forEach((episode, index) => {
    const location = imported.locations[index] ?? { file: '(unknown)' };
    covered.add(episode.instance_id);
    if (episode.policy === undefined && episode.model_patch !== undefined) {
      imported.problems.push(
        problemAt(location, {
          field: 'model_patch',
          message: 'this record grades a given patch; --policy lets the model write one',
          hint: 'submit predictions in a run of their own, without --policy',
        }),
      );
      return;
    }
    episodes.push(episode.policy === undefined ? { ...episode, policy } : episode);
    locations.push(location);
  });
  imported.episodes = episodes;
  imported.locations = locations;
  mergeInto(
    imported,
    importSweBenchPolicyEpisodes(
      instances.filter((located) => !covered.has(located.instance.instance_id)),
      { ...options, policy },
    ),
  );
}

function importFile(
  file: InputFile,
  format: Exclude<InputFormat, 'swebench-dataset'>,
  options: SweBenchImportOptions,
): ImportResult {
  switch (format) {
    case 'native':
      return importNativeEpisodes(file, options);
    case 'swe-agent-traj':
      return importSweAgentTrajectory(file, options);
    case 'mini-swe-agent':
      return importMiniSweAgent(file, options);
    case 'openai-messages':
      return importOpenAiMessages(file, options);
    case 'swebench-predictions':
      return importSweBenchPredictions(file, options);
  }
}

function checkOptions(options: ValidationOptions): Problem[] {
  const problems: Problem[] = [];
  const at = { file: OPTIONS_FILE };
  if (!IdSchema.safeParse(options.runId).success) {
    problems.push(
      problemAt(at, {
        field: 'runId',
        message: `invalid run id "${options.runId}"`,
        hint: 'ids may use letters, digits and . _ @ + - / only (at most 200 characters)',
      }),
    );
  }
  if (options.samples !== undefined && !(Number.isInteger(options.samples) && options.samples >= 1)) {
    problems.push(
      problemAt(at, {
        field: 'samples',
        message: `expected a whole number ≥ 1, got ${options.samples}`,
        hint: 'pass --samples 1 or more',
      }),
    );
  }
  for (const field of ['maxEpisodeBytes', 'maxSteps'] as const) {
    const value = options[field];
    if (value !== undefined && !(Number.isInteger(value) && value >= 1)) {
      problems.push(
        problemAt(at, {
          field,
          message: `expected a whole number ≥ 1, got ${value}`,
          hint: 'raise the limit or leave it at its default',
        }),
      );
    }
  }
  if (options.gold === true && options.policyFile !== undefined) {
    problems.push(
      problemAt(at, {
        field: 'gold',
        message: "--gold grades the dataset's own patches, --policy has a model write them",
        hint: 'use one of them per run',
      }),
    );
  }
  const templateError = options.imageTemplate === undefined ? undefined : imageTemplateError(options.imageTemplate);
  if (templateError !== undefined)
    problems.push(problemAt(at, { field: 'imageTemplate', message: templateError, hint: 'fix --image-template' }));
  return problems;
}

interface CheckContext {
  options: ValidationOptions;
  instances: ReadonlyMap<string, SweBenchInstance>;
}

function checkAll(
  imported: ImportResult,
  context: CheckContext,
): Pick<ValidationResult, 'episodes' | 'locations' | 'problems'> {
  const { options } = context;
  const maxBytes = options.maxEpisodeBytes ?? DEFAULT_MAX_EPISODE_BYTES;
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const result: Pick<ValidationResult, 'episodes' | 'locations' | 'problems'> = {
    episodes: [],
    locations: [],
    problems: [...imported.problems],
  };
  const reported = new Set<string>();
  const report = (problem: Problem): void => {
    // Samples of one record share their size problems: say it once (their sizes differ by the digits of sample_index).
    const what = problem.code === 'INPUT_TOO_LARGE' ? problem.code : problem.message;
    const key = JSON.stringify([problem.file, problem.line, problem.path, problem.field, what]);
    if (reported.has(key)) return;
    reported.add(key);
    result.problems.push(problem);
  };
  const seen = new Map<string, RecordLocation>();

  imported.episodes.forEach((input, index) => {
    const location = imported.locations[index] ?? { file: '(unknown)' };
    const candidate = withDatasetEval(input, context);
    const checked = checkEpisode(candidate, location);
    if (!checked.ok) {
      // A dataset's eval spec or an attached policy can make a valid import invalid (a template needing a problem
      // statement the record lacks): said at the record, field by field.
      for (const problem of checked.problems) report(problem);
      return;
    }
    const episode = EpisodeSchema.parse(candidate);
    let ok = true;
    const noTests = emptyTestListsProblem(episode, location);
    if (noTests !== undefined) {
      ok = false;
      report(noTests);
    }
    if (episode.trajectory.length > maxSteps) {
      ok = false;
      report(
        problemAt(location, {
          field: 'trajectory',
          message: `${episode.trajectory.length} steps exceed the limit of ${maxSteps}`,
          hint: 'split or shorten the trajectory, or raise the step limit (maxSteps)',
          code: 'INPUT_TOO_LARGE',
        }),
      );
    }
    const bytes = Buffer.byteLength(JSON.stringify(episode), 'utf8');
    if (bytes > maxBytes) {
      ok = false;
      report(
        problemAt(location, {
          message: `episode is ${bytes} bytes serialized, over the limit of ${maxBytes}`,
          hint: 'shrink the payload (long recorded observations are the usual cause) or raise the size limit (maxEpisodeBytes)',
          code: 'INPUT_TOO_LARGE',
        }),
      );
    }
    const key = `${episode.run_id}\u0000${episode.episode_id}\u0000${episode.sample_index}`;
    const first = seen.get(key);
    if (first !== undefined) {
      report(
        problemAt(location, {
          field: 'episode_id',
          message: `duplicate episode (run ${episode.run_id}, episode ${episode.episode_id}, sample ${episode.sample_index}); first at ${formatLocation(first)}`,
          hint: 'give one of them another episode_id or sample_index, or remove it',
          code: 'INPUT_DUPLICATE',
        }),
      );
      return;
    }
    seen.set(key, location);
    if (!ok) return;
    result.episodes.push(episode);
    result.locations.push(location);
  });
  return result;
}

/**
 * Replayed trajectories know their instance but not how to grade it (nor, for a policy, its problem statement);
 * a dataset passed alongside does.
 */
function withDatasetEval(input: EpisodeInput, context: CheckContext): EpisodeInput {
  const instance = context.instances.get(input.instance_id);
  if (instance === undefined) return input;
  let out = input;
  if (out.eval === undefined) {
    const testCommand = context.options.testCommand;
    out = { ...out, eval: evalSpecForInstance(instance, testCommand === undefined ? {} : { testCommand }) };
  }
  if (out.policy !== undefined && out.problem_statement === undefined && instance.problem_statement !== undefined) {
    out = { ...out, problem_statement: instance.problem_statement };
  }
  return out;
}
