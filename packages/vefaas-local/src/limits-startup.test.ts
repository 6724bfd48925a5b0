/**
 * A host that cannot enforce a sandbox limit says which, at start-up (one warning naming each limit and why)
 * and in /healthz, instead of running silently without it. A cgroup root with no hierarchy in it stands for a
 * machine whose cgroups cannot be used.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@rollout-fleet/shared';
import { memorySink } from '@rollout-fleet/test-kit/memory-sink';
import { startVefaasLocal, type VefaasLocalHandle } from './host.js';

describe('limits that cannot be enforced', () => {
  let root: string;
  let host: VefaasLocalHandle;
  const sink = memorySink();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rf-no-cgroups-'));
    host = await startVefaasLocal({
      isolation: 'none',
      cgroup: { root },
      logger: createLogger({ level: 'info', format: 'json', destination: sink }),
    });
  });

  afterAll(async () => {
    await host?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('are named in one start-up warning and in /healthz', async () => {
    const warning = sink.records().find((r) => String(r.msg).startsWith('sandbox limits NOT enforced'));
    expect(warning?.level).toBe(40);
    for (const limit of ['memory', 'processes', 'cpu', 'disk']) expect(String(warning?.msg)).toContain(limit);
    const health = (await (await fetch(`${host.controlPlaneUrl}/healthz`)).json()) as {
      limits: { cgroup: string; unenforced: Array<{ limit: string; why: string }> };
    };
    expect(health.limits.cgroup).toBe('none');
    expect(health.limits.unenforced.map((u) => u.limit)).toEqual(['memory', 'processes', 'cpu', 'disk']);
    expect(health.limits.unenforced[1]?.why).toBe(
      `pids controller: no cgroup hierarchy at ${root}; a fork bomb is not contained`,
    );
  });
});
