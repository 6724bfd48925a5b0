import type { PolicyInput } from '@rollout-fleet/shared';
import { buildEpisodes, type EpisodeDraft } from './episode-builder.js';
import { evalSpecForInstance, type LocatedInstance } from './swebench-dataset.js';
import { emptyResult, mergeInto, type ImportOptions, type ImportResult } from './types.js';

/**
 * A SWE-bench dataset under `--policy`: every instance becomes a policy episode — the model is given the problem
 * statement in the instance's image, and the result is graded with the instance's tests. `--samples N` makes N
 * episodes per instance (one RL group).
 */
export function importSweBenchPolicyEpisodes(
  instances: readonly LocatedInstance[],
  options: ImportOptions & { policy: PolicyInput; testCommand?: string },
): ImportResult {
  const result = emptyResult();
  for (const { instance, location } of instances) {
    const draft: EpisodeDraft = {
      instanceId: instance.instance_id,
      trajectory: [],
      eval: evalSpecForInstance(
        instance,
        options.testCommand === undefined ? {} : { testCommand: options.testCommand },
      ),
      policy: options.policy,
      metadata: { source_format: 'swebench-dataset' },
    };
    if (instance.problem_statement !== undefined) draft.problemStatement = instance.problem_statement;
    if (instance.image_name !== undefined) draft.recordImage = instance.image_name;
    mergeInto(result, buildEpisodes(draft, location, options));
  }
  return result;
}
