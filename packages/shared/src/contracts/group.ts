/**
 * Wire contract: RL groups. A group is every sample of one (run, episode_id) — the N rollouts of one prompt that
 * GRPO-style algorithms normalise against each other. Its size is fixed when the samples are submitted; the
 * group-completed event is emitted once, when the last of its samples gets a result. snake_case like results.
 */
import { z } from 'zod';
import { EpisodeResultSchema } from './result.js';

export const GroupSampleSchema = z.object({
  sample_index: z.number().int().min(0).describe("The sample's index in the group."),
  status: z.enum(['completed', 'failed']).describe("The sample result's status."),
  resolved: z.boolean().nullable().describe("The sample result's resolved (null when not graded or failed)."),
  reward: z.number().nullable().describe('null for a failed sample: an infra failure is no reward (never 0).'),
});
export type GroupSample = z.infer<typeof GroupSampleSchema>;

export const GroupEventSchema = z.object({
  run_id: z.string().describe("The group's run."),
  episode_id: z.string().describe('The group id (= episode id).'),
  instance_id: z.string().describe("The group's task instance."),
  size: z.number().int().min(1).describe('Samples in the group.'),
  samples: z.array(GroupSampleSchema).describe('One entry per sample, by sample index.'),
  rewarded: z.number().int().min(0).describe('Samples with a reward (failed samples have none).'),
  reward_mean: z.number().nullable().describe('Mean of the non-null rewards; null when no sample has one.'),
  reward_std: z
    .number()
    .nullable()
    .describe(
      "Sample standard deviation (N − 1 denominator, as `torch.std`, which veRL's GRPO normalises by) of the non-null rewards; null with fewer than two.",
    ),
  completed_at: z.string().describe("When the last sample's result was committed (ISO 8601, Redis server clock)."),
  results: z
    .array(EpisodeResultSchema)
    .describe("The samples' full results, by sample index (those still within the retention period)."),
});
export type GroupEvent = z.infer<typeof GroupEventSchema>;

/** Mean and sample standard deviation of the rewards that exist. */
export function rewardStats(rewards: readonly (number | null)[]): {
  rewarded: number;
  mean: number | null;
  std: number | null;
} {
  const given = rewards.filter((r): r is number => r !== null);
  if (given.length === 0) return { rewarded: 0, mean: null, std: null };
  const mean = given.reduce((a, b) => a + b, 0) / given.length;
  if (given.length < 2) return { rewarded: given.length, mean, std: null };
  const variance = given.reduce((acc, r) => acc + (r - mean) ** 2, 0) / (given.length - 1);
  return { rewarded: given.length, mean, std: Math.sqrt(variance) };
}
