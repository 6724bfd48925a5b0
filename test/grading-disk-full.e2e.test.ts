/**
 * A full disk inside the agent's sandbox is the model's doing (issue #9 item 2: "disk full inside the
 * sandbox"): a step that fills /tmp leaves a repository whose patch cannot be taken (the extraction needs a
 * few bytes of /tmp), so the episode is graded as no patch — reward 0 with PATCH_EXTRACTION_FAILED (model),
 * in one attempt — never retried into a null reward. Real pipeline: vefaas-local sandboxes whose writable
 * mounts are 16 MiB tmpfs (`sandboxDiskMB`), so the disk really is full (ENOSPC), as on a platform.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Episode, EpisodeResult } from '@rollout-fleet/shared';
import { submitRun, validateInputs } from '@rollout-fleet/producer';
import { startWorker, type RunningWorker } from '@rollout-fleet/worker';
import {
  SWEEP,
  collectResults,
  configOf,
  openPipeline,
  readSweep,
  silentLogger,
  startHost,
  testEnv,
  type Host,
  type Pipeline,
} from './support/pipeline-harness.js';

const bash = (command: string): Episode['trajectory'][number] => ({ name: 'execute_bash', arguments: { command } });
const FIX = bash("sed -i 's/return a - b/return a + b/' /testbed/pyutils/calc.py");

describe('a disk the model filled', () => {
  let host: Host;
  let pipeline: Pipeline;
  let worker: RunningWorker;
  const results = new Map<string, EpisodeResult>();

  beforeAll(async () => {
    host = await startHost({ sandboxDiskMB: 16 });
    pipeline = openPipeline(configOf(testEnv({ RF_BACKOFF_MS: '100' })));
    const template = validateInputs([{ path: SWEEP, text: await readSweep() }], { runId: 'disk' }).episodes.find(
      (e) => e.episode_id === 'pyutils__calc-add',
    ) as Episode;
    const episodes: Episode[] = [
      // 40 MB into a 16 MiB /tmp: the write stops at ENOSPC and the file stays.
      {
        ...template,
        run_id: 'disk',
        episode_id: 'fill-tmp',
        trajectory: [FIX, bash('head -c 40000000 /dev/zero > /tmp/fill; df -k /tmp | tail -1')],
      },
      { ...template, run_id: 'disk', episode_id: 'control', trajectory: [FIX] },
    ];
    await submitRun({ queue: pipeline.queue, redis: pipeline.redis, keys: pipeline.keys, runId: 'disk', episodes });
    worker = await startWorker({ config: pipeline.config, target: host.target, logger: silentLogger, concurrency: 2 });
    for (const result of await collectResults(pipeline, 'disk', episodes.length))
      results.set(result.episode_id, result);
  }, 120_000);

  afterAll(async () => {
    await worker?.close();
    await pipeline?.close();
    await host?.close();
  });

  it('the step really filled the disk', () => {
    expect(results.get('fill-tmp')?.steps[1]?.output).toContain('No space left on device');
  });

  it('is graded as no patch: reward 0, PATCH_EXTRACTION_FAILED (model), one attempt', () => {
    const result = results.get('fill-tmp');
    expect(result).toMatchObject({ status: 'completed', resolved: false, reward: 0, patch: null });
    expect(result?.failure).toMatchObject({ code: 'PATCH_EXTRACTION_FAILED', class: 'model' });
    expect(result?.attempts).toHaveLength(1);
  });

  it('the same fix without the full disk resolves on the same small disks (the control)', () => {
    expect(results.get('control')).toMatchObject({ status: 'completed', resolved: true, reward: 1, failure: null });
  });
});
