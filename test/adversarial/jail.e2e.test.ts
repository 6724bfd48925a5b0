/**
 * From a model's step, vefaas-local cannot be used against the grader, other sandboxes or the host
 * (docs/adversarial-grading.md; issue 24 items 4 and 6): the SWE-ReX token is nowhere to read (so the model cannot
 * close its own session with it to buy a null), there is no host-backed directory to fill, and no host path is
 * visible. The probe's findings are printed by the step and checked here; the fix still grades 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EpisodeResult } from '@rollout-fleet/shared';
import { startHost, type Host } from '../support/pipeline-harness.js';
import { FIX, bash, runCases, writeFile } from './adversarial-kit.js';

const PROBE = [
  'import os, re',
  // What a model hunting the token (to close its own session with it) would read: `--auth-token X` on any argv,
  // an environment variable naming a token or key, the server's memory.
  'hits = []',
  "for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:",
  '    try:',
  "        argv = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\\0')",
  "        if b'--auth-token' in argv: hits.append(f'{pid} argv')",
  "        env = open(f'/proc/{pid}/environ', 'rb').read()",
  "        if re.search(rb'(TOKEN|API_KEY)=', env): hits.append(f'{pid} environ')",
  '    except OSError:',
  '        pass',
  "print('TOKEN-HITS', hits)",
  'try:',
  "    open('/run/swerex/fill', 'wb').write(b'x' * 4096)",
  "    print('RUN-DIR-WRITABLE')",
  'except OSError as e:',
  "    print('RUN-DIR-CLOSED', e.errno)",
  "mounts = [l.split(' - ') for l in open('/proc/self/mountinfo').read().splitlines()]",
  "rw = [m[0].split()[4] for m in mounts if 'rw' in m[0].split()[5].split(',') and m[1].split()[0] not in ('tmpfs', 'proc', 'devtmpfs', 'devpts', 'mqueue')]",
  "print('HOST-RW-MOUNTS', rw)",
].join('\n');

describe('the jail, probed by the model', () => {
  let host: Host;
  let results: Map<string, EpisodeResult>;
  let close: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    host = await startHost();
    ({ results, close } = await runCases(
      host,
      [
        {
          id: 'probe',
          runner: 'unittest',
          trajectory: [bash(writeFile('/tmp/probe.py', PROBE)), bash('python3 /tmp/probe.py'), FIX],
        },
      ],
      { runId: 'adv-jail' },
    ));
  }, 300_000);
  afterAll(async () => {
    await close();
    await host?.close();
  });

  it('a model hunting the token (to close its own session) finds none; no socket directory, no host-backed writable mount; the fix grades 1', () => {
    const r = results.get('probe');
    const out = r?.steps[1]?.output ?? '';
    expect(out).toContain('TOKEN-HITS []');
    expect(out).toMatch(/RUN-DIR-CLOSED \d+/);
    expect(out).toContain('HOST-RW-MOUNTS []');
    expect(r).toMatchObject({ status: 'completed', resolved: true, reward: 1 });
  });
});
