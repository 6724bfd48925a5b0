/**
 * POST /v1/runs and the run endpoints over real Redis: validation errors come back as JSON naming file, line or
 * record path, and field, with nothing enqueued (JSON records, JSONL bodies, files in other formats, the request's
 * own fields); a re-POST is idempotent (JSON or JSONL alike); status counts groups; cancel and retry act on the run;
 * an unknown run is 404 with the closest id; an oversized body is 413.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EpisodeSchema } from '@rollout-fleet/shared';
import { resultFixture } from '@rollout-fleet/test-kit/result-fixture';
import { itWith } from '@rollout-fleet/test-kit/needs';
import { readSharedData, sharedDataNeed } from '@rollout-fleet/test-kit/shared-data';
import { startTestApi, type TestApi } from './support/api-harness.js';
import { SWEEP } from './support/pipeline-harness.js';

interface ErrorBody {
  error: { code: string; message: string; problems?: Array<Record<string, unknown>>; did_you_mean?: string[] };
}

describe('API runs', () => {
  let t: TestApi;
  let sweep: string;
  let records: Array<Record<string, unknown>>;

  beforeAll(async () => {
    t = await startTestApi({ env: { RF_API_MAX_BODY_MB: '1' } });
    sweep = await readFile(SWEEP, 'utf8');
    records = sweep
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Every key of the test's prefix but the queue's `meta` and the fleet id (written by the API when it starts). */
  async function prefixKeys(): Promise<string[]> {
    const { prefix, name } = t.config.queue;
    const keys = [...(await t.pipeline.redis.keys(`${prefix}:*`)), ...(await t.pipeline.redis.keys(`rf:${prefix}:*`))];
    return keys.filter((key) => key !== `${prefix}:${name}:meta` && key !== t.pipeline.keys.fleetId());
  }

  async function rejected(res: Response, status = 422): Promise<ErrorBody['error']> {
    expect(res.status).toBe(status);
    return ((await res.json()) as ErrorBody).error;
  }

  it('returns every problem located by file, line or record path and field, and enqueues nothing', async () => {
    const { trajectory } = records[0] as { trajectory: Array<Record<string, unknown>> };
    const badRecord = { ...records[1], instance_id: undefined, trajectory: [{ ...trajectory[0], name: undefined }] };
    const asJson = await rejected(
      await t.call('/v1/runs', { method: 'POST', json: { run_id: 'bad', episodes: [records[0], badRecord] } }),
    );
    expect(asJson.code).toBe('INPUT_INVALID');
    expect(asJson.message).toMatch(/nothing was enqueued/);
    expect(asJson.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: 'episodes',
          path: '$[1]',
          field: 'trajectory[0].name',
          message: expect.stringMatching(/missing/),
        }),
      ]),
    );

    const lines = [JSON.stringify(records[0]), JSON.stringify(records[1]), '{"episode_id": "x", oops}'].join('\n');
    const asJsonl = await rejected(
      await t.call('/v1/runs?run_id=bad&samples=2', {
        method: 'POST',
        body: lines,
        headers: { 'content-type': 'application/x-ndjson' },
      }),
    );
    expect(asJsonl.problems).toEqual([
      expect.objectContaining({ file: 'request.jsonl', line: 3, message: expect.stringMatching(/not valid JSON/) }),
    ]);

    const duplicate = await rejected(
      await t.call('/v1/runs', {
        method: 'POST',
        json: {
          run_id: 'bad',
          files: [
            { name: 'a.jsonl', content: JSON.stringify(records[0]) },
            { name: 'b.jsonl', content: JSON.stringify(records[0]) },
          ],
        },
      }),
    );
    expect(duplicate.code).toBe('INPUT_DUPLICATE');
    expect(duplicate.problems).toEqual([
      expect.objectContaining({
        file: 'b.jsonl',
        line: 1,
        field: 'episode_id',
        message: expect.stringMatching(/first at a\.jsonl:1/),
      }),
    ]);

    const options = await rejected(
      await t.call('/v1/runs', {
        method: 'POST',
        json: { run_id: 'bad run', sampels: 2, samples: 0, episodes: [records[0]] },
      }),
    );
    expect(options.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: '(request)', field: 'sampels', hint: 'did you mean "samples"?' }),
        expect.objectContaining({ file: '(request)', field: 'samples' }),
        expect.objectContaining({ file: '(request)', field: 'run_id' }),
      ]),
    );
    const notJson = await rejected(
      await t.call('/v1/runs', {
        method: 'POST',
        body: '{\n"run_id": "bad",\n}',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(notJson.problems).toEqual([expect.objectContaining({ file: '(request)', line: 3 })]);
    const noQueryRun = await rejected(
      await t.call('/v1/runs', { method: 'POST', body: lines, headers: { 'content-type': 'application/x-ndjson' } }),
    );
    expect(noQueryRun.problems).toEqual([expect.objectContaining({ file: '(request)', field: 'run_id' })]);

    expect(await prefixKeys()).toEqual([]);
  });

  it('is idempotent: a re-POST (JSON or JSONL) enqueues only what is missing; status counts samples and groups', async () => {
    const first = await t.call('/v1/runs', {
      method: 'POST',
      json: { run_id: 'sweep', episodes: records, samples: 2 },
    });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({
      run_id: 'sweep',
      episodes: 12,
      enqueued: 12,
      skipped_done: 0,
      skipped_queued: 0,
      dry_run: false,
      warnings: [],
    });
    const again = await t.call('/v1/runs', {
      method: 'POST',
      json: { run_id: 'sweep', episodes: records, samples: 2 },
    });
    expect(await again.json()).toMatchObject({ episodes: 12, enqueued: 0, skipped_queued: 12 });
    const asJsonl = await t.call('/v1/runs?run_id=sweep&samples=2', {
      method: 'POST',
      body: sweep,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(await asJsonl.json()).toMatchObject({ episodes: 12, enqueued: 0, skipped_queued: 12 });
    expect(await t.pipeline.queue.getJobCounts('waiting')).toEqual({ waiting: 12 });

    const status = await t.call('/v1/runs/sweep');
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({
      run_id: 'sweep',
      total: 12,
      done: 0,
      waiting: 12,
      cancelled: false,
      groups: { total: 6, completed: 0 },
    });

    const dry = await t.call('/v1/runs', { method: 'POST', json: { run_id: 'dry', episodes: records, dry_run: true } });
    expect(await dry.json()).toMatchObject({ episodes: 6, enqueued: 0, dry_run: true });
    expect(await t.pipeline.redis.exists(t.pipeline.keys.run('dry'))).toBe(0);
  });

  // SWE-agent's files are read in place from the shared data; the mini-swe-agent one was written here (test/fixtures/).
  itWith(
    [sharedDataNeed('swe-agent')],
    'reads files in the import formats the CLI reads: SWE-agent and mini-swe-agent trajectories, a SWE-bench dataset with predictions',
    async () => {
      const fixture = async (name: string) => ({
        name: name.split('/').pop()!,
        content: name.startsWith('swe-agent/')
          ? readSharedData(name)
          : await readFile(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'),
      });
      const traj = await t.call('/v1/runs', {
        method: 'POST',
        json: {
          run_id: 'formats',
          image: 'swe-agent-test-repo',
          files: [
            await fixture('swe-agent/function_calling_simple.traj'),
            await fixture('mini-swe-agent/tool-calls.traj.json'),
          ],
        },
      });
      expect(traj.status).toBe(200);
      expect(await traj.json()).toMatchObject({ run_id: 'formats', episodes: 2, enqueued: 2 });
      const queued = (await t.pipeline.queue.getJobs(['waiting']))
        .map((job) => EpisodeSchema.parse(job.data.episode))
        .filter((e) => e.run_id === 'formats');
      const byBundle = new Map(queued.map((e) => [e.tool_bundle?.name, e]));
      // As the importers read them (docs/input-formats.md): SWE-agent's windowed tools where its repository sat; mini-swe-agent's bash actions.
      expect(byBundle.get('swe-agent')).toMatchObject({
        repo_dir: '/SWE-agent__test-repo',
        sandbox: { image: 'swe-agent-test-repo' },
      });
      expect(byBundle.get('swe-agent')!.trajectory.length).toBeGreaterThan(0);
      expect(byBundle.get('mini-swe-agent')!.trajectory.every((call) => call.name === 'execute_bash')).toBe(true);

      // A SWE-bench dataset graded on given predictions: one episode per predicted instance, its model_patch as given.
      const dataset = await fixture('swe-agent/swe-bench-lite-test.json');
      const predictions = {
        name: 'preds.jsonl',
        content: `${JSON.stringify({ instance_id: 'django__django-16255', model_name_or_path: 'm', model_patch: 'diff --git a/x b/x\n' })}\n`,
      };
      const graded = await t.call('/v1/runs', {
        method: 'POST',
        json: {
          run_id: 'formats-preds',
          image_template: 'sweb.{instance_id}',
          files: [dataset],
          predictions: [predictions],
          dry_run: true,
        },
      });
      expect(graded.status).toBe(200);
      expect(await graded.json()).toMatchObject({ run_id: 'formats-preds', episodes: 1, enqueued: 0, dry_run: true });
    },
  );

  it('retries the failed episodes of a run and cancels it', async () => {
    const submitted = await t.call('/v1/runs', {
      method: 'POST',
      json: { run_id: 'admin', episodes: records.slice(0, 2) },
    });
    expect(submitted.status).toBe(200);
    // A worker that took the first episode and failed it for good (its job left in the queue as BullMQ keeps it).
    const job = await t.pipeline.queue.getJob(`admin|${String(records[0]?.episode_id)}|0`);
    const episode = EpisodeSchema.parse(job?.data.episode);
    const failed = resultFixture({
      run_id: 'admin',
      episode_id: episode.episode_id,
      instance_id: episode.instance_id,
      status: 'failed',
      resolved: null,
      reward: null,
      failure: { code: 'SANDBOX_START_TIMEOUT', class: 'infra', message: 'not alive' },
      finished_at: new Date().toISOString(),
    });
    await job?.remove();
    await t.pipeline.store.commit(failed);
    const retry = await t.call('/v1/runs/admin/retry', { method: 'POST' });
    expect(await retry.json()).toEqual({ run_id: 'admin', retried: 0, missing_payload: 1 });

    await t.call('/v1/runs', { method: 'POST', json: { run_id: 'admin', episodes: records.slice(0, 1), force: true } });
    // The forced episode runs in its next generation; a worker failing it commits there.
    const { generation } = await t.pipeline.store.state({
      runId: 'admin',
      episodeId: episode.episode_id,
      sampleIndex: 0,
    });
    await t.pipeline.store.commit(failed, { generation, attemptsMade: 0 });
    const retried = await t.call('/v1/runs/admin/retry', { method: 'POST' });
    expect(await retried.json()).toEqual({ run_id: 'admin', retried: 1, missing_payload: 0 });
    expect(await t.pipeline.store.get('admin', episode.episode_id, 0)).toBeUndefined();

    const cancel = await t.call('/v1/runs/admin/cancel', { method: 'POST' });
    expect(await cancel.json()).toEqual({ run_id: 'admin', removed: 2, active: 0 });
    expect(await (await t.call('/v1/runs/admin')).json()).toMatchObject({
      cancelled: true,
      waiting: 0,
      done: 2,
      total: 2,
    });

    // Into a cancelled run: 409 and nothing enqueued, until resume runs its cancelled episodes again.
    const refused = await t.call('/v1/runs', {
      method: 'POST',
      json: { run_id: 'admin', episodes: records.slice(0, 2) },
    });
    expect(await rejected(refused, 409)).toMatchObject({
      code: 'RUN_CANCELLED',
      message: expect.stringContaining('submit again with --resume'),
    });
    const waitingOf = async (): Promise<string[]> =>
      (await t.pipeline.queue.getRanges(['wait'], 0, -1, true)).filter((id) => id.startsWith('admin|'));
    expect(await waitingOf()).toEqual([]);
    const resumed = await t.call('/v1/runs', {
      method: 'POST',
      json: { run_id: 'admin', episodes: records.slice(0, 2), resume: true },
    });
    expect(await resumed.json()).toMatchObject({ run_id: 'admin', enqueued: 2 });
    expect(await (await t.call('/v1/runs/admin')).json()).toMatchObject({ cancelled: false, waiting: 2, done: 0 });
    expect(await waitingOf()).toHaveLength(2);
  });

  it('attaches a policy block (object or YAML file) to every episode, and locates a mistake in it', async () => {
    const policy = {
      base_url: 'http://10.0.0.5:8000/v1',
      model: 'qwen',
      api_key_env: 'POLICY_KEY',
      sampling: { temperature: 1, max_completion_tokens: 512 },
    };
    const bad = await rejected(
      await t.call('/v1/runs', {
        method: 'POST',
        json: {
          run_id: 'pol',
          episodes: records.slice(0, 1),
          policy: { ...policy, model: undefined, api_key: 'sk-x' },
        },
      }),
    );
    expect(bad.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'policy.json', field: 'policy.model' }),
        expect.objectContaining({
          file: 'policy.json',
          field: expect.stringMatching(/^policy/),
          message: expect.stringMatching(/api_key/),
        }),
      ]),
    );
    expect(await t.pipeline.redis.exists(t.pipeline.keys.run('pol'))).toBe(0);
    const yaml = `base_url: http://10.0.0.5:8000/v1\nmodel: qwen\napi_key_env: POLICY_KEY\nsampling:\n  temperature: 1\n  max_completion_tokens: 512\n`;
    for (const [runId, given] of [
      ['pol', policy],
      ['pol-yaml', { name: 'policy.yaml', content: yaml }],
    ] as const) {
      const task = { ...records[0], trajectory: [], problem_statement: 'add() subtracts; make it add.' };
      const res = await t.call('/v1/runs', {
        method: 'POST',
        json: { run_id: runId, episodes: [task], policy: given },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const job = await t.pipeline.queue.getJob(`${runId}|${String(records[0]?.episode_id)}|0`);
      expect(job?.data.episode.policy).toMatchObject({
        base_url: 'http://10.0.0.5:8000/v1',
        model: 'qwen',
        api_key_env: 'POLICY_KEY',
      });
    }
  });

  it('announces a run for warm pools (JSON or JSONL): nothing enqueued, the demand recorded; submitting the run retires it', async () => {
    const { keys, redis, queue } = t.pipeline;
    const announced = await t.call('/v1/runs', {
      method: 'POST',
      json: { run_id: 'next', episodes: records, samples: 3, announce: true, announce_ttl_s: 600 },
    });
    expect(announced.status, await announced.clone().text()).toBe(200);
    const body = (await announced.json()) as { announced: { specs: number; sandboxes: number } };
    // 6 records × 3 samples, one sandbox per sample.
    expect(body).toMatchObject({ run_id: 'next', episodes: 18, enqueued: 0, announced: { sandboxes: 18 } });
    const counts = Object.values(await redis.hgetall(keys.announced('next'))).map(Number);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(18);
    expect(counts).toHaveLength(body.announced.specs);
    expect(await redis.sismember(keys.announcedRuns(), 'next')).toBe(1);
    const ttl = await redis.ttl(keys.announced('next'));
    expect(ttl).toBeGreaterThan(500);
    expect(ttl).toBeLessThanOrEqual(600);
    expect(await redis.exists(keys.run('next'))).toBe(0);
    for (const record of records) expect(await queue.getJob(`next|${String(record.episode_id)}|0`)).toBeUndefined();

    // The same through a JSONL body with the options in the query string (replaces the announcement).
    const asJsonl = await t.call('/v1/runs?run_id=next&announce=true', {
      method: 'POST',
      body: sweep,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(await asJsonl.json()).toMatchObject({ episodes: 6, enqueued: 0, announced: { sandboxes: 6 } });
    expect(
      Object.values(await redis.hgetall(keys.announced('next')))
        .map(Number)
        .reduce((a, b) => a + b, 0),
    ).toBe(6);

    // A bad announcement is refused like a bad submission, and records nothing.
    const bad = await rejected(
      await t.call('/v1/runs', {
        method: 'POST',
        json: { run_id: 'bad-next', episodes: [{ ...records[0], sandbox: 3 }], announce: true },
      }),
    );
    expect(bad.code).toBe('INPUT_INVALID');
    expect(await redis.exists(keys.announced('bad-next'))).toBe(0);

    // Submitting the run enqueues it and retires the announcement: its jobs now speak for themselves.
    const submitted = await t.call('/v1/runs', { method: 'POST', json: { run_id: 'next', episodes: records } });
    expect(await submitted.json()).toMatchObject({ enqueued: 6 });
    expect(await redis.exists(keys.announced('next'))).toBe(0);
    expect(await redis.sismember(keys.announcedRuns(), 'next')).toBe(0);
  });

  it('answers 404 with the closest run id for an unknown run, on every run route', async () => {
    for (const [method, path] of [
      ['GET', '/v1/runs/swep'],
      ['POST', '/v1/runs/swep/cancel'],
      ['POST', '/v1/runs/swep/retry'],
      ['GET', '/v1/runs/swep/results'],
      ['GET', '/v1/runs/swep/groups'],
    ] as const) {
      const error = await rejected(await t.call(path, { method }), 404);
      expect(error, `${method} ${path}`).toMatchObject({ code: 'RUN_NOT_FOUND', did_you_mean: ['sweep'] });
    }
    expect(await t.pipeline.redis.exists(t.pipeline.keys.run('swep'))).toBe(0);
  });

  it('refuses a body over RF_API_MAX_BODY_MB with 413 and enqueues nothing', async () => {
    const huge = {
      ...records[0],
      episode_id: 'huge',
      trajectory: [{ name: 'execute_bash', arguments: { command: `echo ${'x'.repeat(1100 * 1024)}` } }],
    };
    const error = await rejected(
      await t.call('/v1/runs', { method: 'POST', json: { run_id: 'huge', episodes: [huge] } }),
      413,
    );
    expect(error.code).toBe('INPUT_TOO_LARGE');
    expect(await t.pipeline.redis.exists(t.pipeline.keys.run('huge'))).toBe(0);
  });
});
