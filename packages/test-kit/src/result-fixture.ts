import type { EpisodeResult } from '@rollout-fleet/shared';

/**
 * A minimal valid result for tests (one literal instead of a copy per test file): completed, resolved,
 * reward 1, no steps, no attempts; `fields` override any part. `instance_id` defaults to `inst-<episode_id>`.
 */
export function resultFixture(
  fields: Partial<EpisodeResult> & Pick<EpisodeResult, 'run_id' | 'episode_id'>,
): EpisodeResult {
  return {
    instance_id: `inst-${fields.episode_id}`,
    sample_index: 0,
    status: 'completed',
    resolved: true,
    reward: 1,
    steps: [],
    patch: null,
    report: null,
    timings: { queue_wait_ms: 0, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 0 },
    attempts: [],
    failure: null,
    worker_id: 'w',
    sandbox_id: null,
    finished_at: new Date(0).toISOString(),
    metadata: {},
    ...fields,
  };
}

/** As `resultFixture`, by reward: a number is a completed result (resolved when > 0); null an infra failure. */
export function rewardedResult(
  fields: Partial<EpisodeResult> & Pick<EpisodeResult, 'run_id' | 'episode_id'>,
  reward: number | null,
): EpisodeResult {
  return resultFixture({
    status: reward === null ? 'failed' : 'completed',
    resolved: reward === null ? null : reward > 0,
    reward,
    failure: reward === null ? { code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' } : null,
    ...fields,
  });
}
