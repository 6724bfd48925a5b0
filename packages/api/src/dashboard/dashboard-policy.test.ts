/** The run page of a policy run: turns, token totals and exit statuses, per result and summed. */
import {
  createKeyspace,
  createRedis,
  ResultStore,
  type Config,
  type EpisodeResult,
  type RedisClient,
  type TurnRecord,
} from '@rollout-fleet/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from './start-dashboard.js';
import {
  TEST_REDIS_URL,
  capturingLogger,
  dashboardTestConfig,
  deletePrefix,
} from '@rollout-fleet/test-kit/dashboard-kit';

function turn(index: number, usage: { prompt_tokens: number; completion_tokens: number }): TurnRecord {
  return {
    index,
    sampling: { temperature: 1 },
    prompt_messages: 2 + 2 * index,
    message: { role: 'assistant', content: null },
    finish_reason: 'tool_calls',
    stop_reason: null,
    response_id: null,
    model: 'qwen',
    system_fingerprint: null,
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    tokens: null,
    logprobs: null,
    latency_ms: 800,
    retries: 0,
    retry_codes: [],
    slot_wait_ms: 0,
    steps: [],
    duration_ms: 900,
  };
}

function policyResult(
  runId: string,
  i: number,
  o: { exit: string | null; turns: number; status?: 'completed' | 'failed' },
): EpisodeResult {
  const turns = Array.from({ length: o.turns }, (_unused, t) =>
    turn(t, { prompt_tokens: 1000 * (t + 1), completion_tokens: 50 }),
  );
  const failed = o.status === 'failed';
  return {
    run_id: runId,
    episode_id: `e${i}`,
    instance_id: `repo__pkg-${i}`,
    sample_index: 0,
    status: o.status ?? 'completed',
    resolved: failed ? null : o.exit === 'submitted',
    reward: failed ? null : o.exit === 'submitted' ? 1 : 0,
    steps: [],
    patch: null,
    report: null,
    timings: { queue_wait_ms: 0, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 30_000 },
    attempts: [],
    failure: failed ? { code: 'POLICY_SERVER_ERROR', class: 'infra', message: '503' } : null,
    worker_id: 'w',
    sandbox_id: null,
    finished_at: new Date().toISOString(),
    metadata: {},
    ...(failed
      ? {}
      : {
          exit_status: o.exit,
          turns,
          tokens: {
            prompt_tokens: turns.reduce((n, t) => n + t.usage!.prompt_tokens, 0),
            completion_tokens: turns.reduce((n, t) => n + t.usage!.completion_tokens, 0),
            total_tokens: turns.reduce((n, t) => n + t.usage!.total_tokens, 0),
          },
          messages: [],
        }),
    policy: {
      base_url: 'http://10.0.0.5:8000/v1',
      model: 'qwen',
      server_kind: 'vllm',
      tool_profile: 'sweagent',
      tools: [],
    },
  };
}

describe('dashboard run page of a policy run', () => {
  let redis: RedisClient;
  let config: Config;
  let dashboard: Dashboard;
  const runId = 'rl-step-7';

  beforeAll(async () => {
    redis = createRedis(TEST_REDIS_URL);
    config = dashboardTestConfig();
    const keys = createKeyspace(config.queue.prefix);
    await redis.sadd(keys.runs(), runId);
    await redis.hset(keys.run(runId), { total: 4, created_at: '2026-11-30T10:00:00.000Z' });
    const store = new ResultStore(redis, keys);
    await store.commit(policyResult(runId, 0, { exit: 'submitted', turns: 3 }));
    await store.commit(policyResult(runId, 1, { exit: 'submitted (exit_format)', turns: 5 }));
    await store.commit(policyResult(runId, 2, { exit: 'submitted', turns: 1 }));
    await store.commit(policyResult(runId, 3, { exit: null, turns: 0, status: 'failed' }));
    dashboard = await startDashboard({ config, port: 0, host: '127.0.0.1', logger: capturingLogger().logger, redis });
  });
  afterAll(async () => {
    await dashboard.close();
    await deletePrefix(redis, config.queue.prefix);
    redis.disconnect();
  });

  it('shows turns, token totals and exit statuses, summed and per result', async () => {
    const page = await (await fetch(new URL(`/runs/${runId}`, dashboard.url))).text();
    expect(page).toContain('<h2>Policy episodes</h2>');
    expect(page).toContain('<td>policy episodes</td><td>4</td>');
    // 3 + 5 + 1 turns; prompt tokens 1000·(1+2+3) + 1000·(1+…+5) + 1000.
    expect(page).toContain('<td>turns</td><td>9 (mean 2.3, max 5)</td>');
    expect(page).toContain('<td>prompt tokens</td><td>22,000</td>');
    expect(page).toContain('<td>completion tokens</td><td>450</td>');
    expect(page).toContain('<td>total tokens</td><td>22,450</td>');
    expect(page).toMatch(
      /<tr><td>submitted<\/td><td>2<\/td><\/tr>\s*<tr><td>failed \(POLICY_SERVER_ERROR\)<\/td><td>1<\/td><\/tr>\s*<tr><td>submitted \(exit_format\)<\/td><td>1<\/td><\/tr>/,
    );
    expect(page).toContain('<th>turns</th><th>tokens</th><th>exit status</th>');
    expect(page).toMatch(/repo__pkg-1#0<\/a>[\s\S]*?<td>5<\/td><td>15,250<\/td><td>submitted \(exit_format\)<\/td>/);
  });
});
