/**
 * A flag a trainer can act on (docs/adversarial-grading.md, "The integrity flag"; issue 24 item 7): a genuine fix
 * whose patch also registers atexit code is resolved and `suspect`; a fix plus a forged channel line is `violated`
 * — reward 0 under RF_INTEGRITY=strict (the default), recorded only under `flag`; `rollout-fleet results
 * --integrity suspect|violated` lists exactly the flagged results; the dashboard (in Debian's chromium, as
 * test/dashboard.e2e.test.ts drives it) shows the flag on the run page and every finding on the episode page.
 */
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findOnPath, jobIdFor, type EpisodeResult } from '@rollout-fleet/shared';
import { startDashboard } from '@rollout-fleet/api/dashboard';
import {
  REDIS_URL,
  configOf,
  runCli,
  silentLogger,
  startHost,
  testEnv,
  type Host,
} from '../support/pipeline-harness.js';
import { FIX, atImport, runCases, type Case } from './adversarial-kit.js';

const FORGE_CHANNEL = atImport(
  [
    'import glob as _g, os as _o',
    "for _p in _g.glob(_o.path.join(_o.environ.get('RF_CHANNEL', '/nonexistent'), '*.jsonl')):",
    '    open(_p, \'a\').write(\'{"k":"test","id":"x","s":"PASSED","n":99}\\t\' + \'0\' * 64 + \'\\n\')',
  ].join('\n'),
);
const CASES: Case[] = [
  { id: 'fix-clean', runner: 'unittest', trajectory: [FIX] },
  {
    id: 'fix-atexit',
    runner: 'unittest',
    trajectory: [FIX, atImport('import atexit as _a\n_a.register(lambda: None)')],
  },
  { id: 'fix-forged-channel', runner: 'pytest', trajectory: [FIX, FORGE_CHANNEL] },
];

describe('the integrity flag', () => {
  let host: Host;
  let strict: Map<string, EpisodeResult>;
  let flag: Map<string, EpisodeResult>;
  const closers: Array<() => Promise<void>> = [];
  const prefix = `{rf-test-flag-${Date.now()}}`;

  beforeAll(async () => {
    host = await startHost();
    const a = await runCases(host, CASES, { runId: 'adv-flag-strict', env: { RF_PREFIX: prefix, REDIS_URL } });
    const b = await runCases(host, CASES, { runId: 'adv-flag-flag', env: { RF_INTEGRITY: 'flag' } });
    closers.push(a.close, b.close);
    strict = a.results;
    flag = b.results;
  }, 300_000);
  afterAll(async () => {
    for (const close of closers) await close();
    await host?.close();
  });

  it('a clean fix: resolved, reward 1, clean', () => {
    expect(strict.get('fix-clean')).toMatchObject({ reward: 1, integrity: { verdict: 'clean', reasons: [] } });
  });

  it('a fix that also registers atexit code: still resolved (reward 1), flagged suspect for review', () => {
    expect(strict.get('fix-atexit')).toMatchObject({
      resolved: true,
      reward: 1,
      integrity: { verdict: 'suspect', reasons: ['PATCH_USES_ATEXIT'] },
    });
  });

  it('a fix plus a forged channel line: violated; reward 0 under strict, recorded only under flag', () => {
    const s = strict.get('fix-forged-channel');
    expect(s).toMatchObject({ resolved: false, reward: 0, integrity: { verdict: 'violated' } });
    expect(s?.integrity?.reasons).toContain('RESULT_CHANNEL_FORGED');
    const f = flag.get('fix-forged-channel');
    expect(f).toMatchObject({ resolved: true, reward: 1, integrity: { verdict: 'violated' } });
  });

  it('results --integrity lists exactly the flagged results', async () => {
    const env = { REDIS_URL, RF_PREFIX: prefix, LOG_LEVEL: 'silent' };
    const ids = async (level: string): Promise<string[]> => {
      const run = await runCli(['results', '--run', 'adv-flag-strict', '--integrity', level], env);
      expect(run.code, run.stderr).toBe(0);
      return run.stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => (JSON.parse(l) as EpisodeResult).episode_id)
        .sort();
    };
    expect(await ids('suspect')).toEqual(['fix-atexit', 'fix-forged-channel']);
    expect(await ids('violated')).toEqual(['fix-forged-channel']);
  });

  it('the dashboard shows the flag per result on the run page and the findings on the episode page (real browser)', async () => {
    const dashboard = await startDashboard({
      config: configOf(testEnv({ RF_PREFIX: prefix })),
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
    const browser = await chromium.launch({
      executablePath: findOnPath('chromium') ?? 'chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    try {
      const page = await browser.newPage();
      expect((await page.goto(`${dashboard.url}runs/adv-flag-strict`))?.status()).toBe(200);
      await page.getByRole('columnheader', { name: 'integrity' }).waitFor();
      const cells = await page.locator('[data-integrity]').evaluateAll((els) => els.map((e) => e.textContent).sort());
      expect(cells).toEqual(['clean', 'suspect', 'violated']);
      const episode = `${dashboard.url}episodes/${encodeURIComponent(jobIdFor('adv-flag-strict', 'fix-forged-channel', 0))}`;
      expect((await page.goto(episode))?.status()).toBe(200);
      await page.getByRole('heading', { name: 'Integrity' }).waitFor();
      expect(await page.locator('tr', { hasText: 'integrity' }).first().textContent()).toContain('violated');
      expect(await page.locator('table.integrity-findings').textContent()).toContain('RESULT_CHANNEL_FORGED');
    } finally {
      await browser.close();
      await dashboard.close();
    }
  });
});
