// The episode viewer's page as HTML: `grading` rendered whatever its fields (before and after the field exists in
// the result contract), observations escaped, nothing executable.
import { describe, expect, it } from 'vitest';
import type { EpisodeResult } from '@rollout-fleet/shared';
import { renderEpisodePage, renderValue } from './episode-page.js';

const RESULT: EpisodeResult = {
  run_id: 'r1', episode_id: 'e1', instance_id: 'inst', sample_index: 0, status: 'completed', resolved: false, reward: 0,
  steps: [{ index: 0, tool: 'bash', args: { command: 'cat x' }, command: 'cat x', output: '<script>alert(1)</script>', output_bytes: 25, truncated: false, exit_code: 0, duration_ms: 12, timed_out: false }],
  patch: '', report: null, timings: { queue_wait_ms: 0, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 1000 },
  attempts: [{ attempt: 1, worker_id: 'w', sandbox_id: null, started_at: 'a', ended_at: 'b', failure: { code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' } }],
  failure: null, worker_id: 'w', sandbox_id: null, finished_at: 'b', metadata: {},
};

const GRADING = {
  parser: 'pytest', tests_found: 2,
  tests: [
    { name: 'tests/test_a.py::test_one', list: 'FAIL_TO_PASS', status: 'PASSED', found: true, ok: true },
    { name: 'tests/test_a.py::test_two', list: 'PASS_TO_PASS', status: null, found: false, ok: false },
  ],
  log: 'line\n'.repeat(100), log_bytes: 500, log_truncated: false, sandbox: 'fresh',
};

describe('episode page', () => {
  it('renders a grading object generically: scalars, the tests as a table, the log folded', () => {
    const page = renderEpisodePage({ result: RESULT, raw: { ...RESULT, grading: GRADING }, jobLink: '/queue/episodes/r1%7Ce1%7C0' });
    expect(page).toContain('<h3>Grading details</h3>');
    expect(page).toContain('<tr><td>parser</td><td>pytest</td></tr>');
    expect(page).toContain('<th>name</th><th>list</th><th>status</th><th>found</th><th>ok</th>');
    expect(page).toContain('<tr><td>tests/test_a.py::test_two</td><td>PASS_TO_PASS</td><td><span class="muted">–</span></td><td>false</td><td>false</td></tr>');
    expect(page).toContain('<details><summary>500 characters</summary>');
    expect(page).toContain('<tr><td>sandbox</td><td>fresh</td></tr>');
  });

  it('renders without a grading object (the field is optional), escapes observations, shows attempts and their failures', () => {
    const page = renderEpisodePage({ result: RESULT, raw: { ...RESULT }, jobLink: '/queue/x' });
    expect(page).not.toContain('Grading details');
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('SANDBOX_DEAD (infra): gone');
    expect(page).toContain('Empty patch.');
    expect(page).toContain('Not graded.');
  });

  it('renders odd values without failing', () => {
    expect(renderValue([1, 'a', null]).value).toBe('1, a, <span class="muted">–</span>');
    expect(renderValue({ nested: { deeper: { deepest: { more: { most: { x: 1 } } } } } }).value).toContain('<pre');
    expect(renderValue([]).value).toBe('<span class="muted">none</span>');
  });
});
