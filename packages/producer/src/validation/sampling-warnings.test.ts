import { describe, expect, it } from 'vitest';
import { EpisodeSchema, type Episode } from '@rollout-fleet/shared';
import { samplingWarnings } from './sampling-warnings.js';

function episode(id: string, sample: number, temperature?: number): Episode {
  return EpisodeSchema.parse({
    run_id: 'r',
    episode_id: id,
    instance_id: id,
    sample_index: sample,
    sandbox: { image: 'pyutils' },
    problem_statement: 'fix it',
    ...(temperature === undefined
      ? { trajectory: [] }
      : {
          policy: {
            base_url: 'http://127.0.0.1:8000/v1',
            model: 'm',
            sampling: { temperature, max_completion_tokens: 16 },
          },
        }),
  });
}

describe('samplingWarnings', () => {
  it('warns once for groups of several samples at temperature 0, naming the first', () => {
    const warnings = samplingWarnings([episode('a', 0, 0), episode('a', 1, 0), episode('b', 0, 0), episode('b', 1, 0)]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^2 group\(s\) of several samples decode with sampling\.temperature 0 \(first: episode a, 2 samples\)/,
    );
  });

  it('says nothing for one sample at temperature 0, sampled groups, or replays', () => {
    expect(samplingWarnings([episode('a', 0, 0), episode('b', 0, 0)])).toEqual([]);
    expect(samplingWarnings([episode('a', 0, 0.7), episode('a', 1, 0.7)])).toEqual([]);
    expect(samplingWarnings([episode('a', 0), episode('a', 1)])).toEqual([]);
  });
});
