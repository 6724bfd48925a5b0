/**
 * What a submission is allowed but probably did not mean, said at submit (never refused): RL groups of several
 * samples decoded greedily. With temperature 0 a server returns the same rollout for every sample, whatever the
 * seed, so every advantage in those groups is zero.
 */
import type { Episode } from '@rollout-fleet/shared';

export function samplingWarnings(episodes: readonly Episode[]): string[] {
  const greedy = new Map<string, { episodeId: string; samples: number }>();
  for (const episode of episodes) {
    if (episode.policy === undefined || episode.policy.sampling.temperature !== 0) continue;
    const key = `${episode.run_id}\0${episode.episode_id}`;
    const group = greedy.get(key) ?? { episodeId: episode.episode_id, samples: 0 };
    group.samples += 1;
    greedy.set(key, group);
  }
  const alike = [...greedy.values()].filter((group) => group.samples > 1);
  if (alike.length === 0) return [];
  return [
    `${alike.length} group(s) of several samples decode with sampling.temperature 0 (first: episode ` +
      `${alike[0]!.episodeId}, ${alike[0]!.samples} samples): a server returns the same rollout for each sample ` +
      'whatever its seed, so their rewards match and every advantage is zero; set a temperature above 0 for RL groups',
  ];
}
