// The episode viewer's page as HTML: the grading block (problem, parser, per-test status, eval log), observations
// escaped, nothing executable.
import { describe, expect, it } from 'vitest';
import { TEST_NOT_FOUND_HINT, type EpisodeResult, type GradingDetails, type TurnRecord } from '@rollout-fleet/shared';
import { renderEpisodePage } from './episode-page.js';

const RESULT: EpisodeResult = {
  run_id: 'r1',
  episode_id: 'e1',
  instance_id: 'inst',
  sample_index: 0,
  status: 'completed',
  resolved: false,
  reward: 0,
  steps: [
    {
      index: 0,
      tool: 'bash',
      args: { command: 'cat x' },
      command: 'cat x',
      output: '<script>alert(1)</script>',
      output_bytes: 25,
      truncated: false,
      exit_code: 0,
      duration_ms: 12,
      timed_out: false,
    },
  ],
  patch: '',
  report: null,
  timings: { queue_wait_ms: 0, sandbox_acquire_ms: 0, replay_ms: 0, grade_ms: 0, total_ms: 1000 },
  attempts: [
    {
      attempt: 1,
      worker_id: 'w',
      sandbox_id: null,
      started_at: 'a',
      ended_at: 'b',
      failure: { code: 'SANDBOX_DEAD', class: 'infra', message: 'gone' },
    },
  ],
  failure: null,
  worker_id: 'w',
  sandbox_id: null,
  finished_at: 'b',
  metadata: {},
};

/** A grade where the episode listed pytest ids but the tests ran under `unittest -v` with the django parser. */
const GRADING: GradingDetails = {
  parser: 'django',
  parser_source: 'episode',
  tests_ran: true,
  timed_out: false,
  tests_parsed: 2,
  tests: [
    {
      id: 'test_add (tests.test_basic.TestCalcAdd.test_add)',
      list: 'FAIL_TO_PASS',
      status: 'PASSED',
      outcome: 'success',
    },
    {
      id: 'tests/test_basic.py::TestBasic::test_mul',
      list: 'PASS_TO_PASS',
      status: null,
      outcome: 'failure',
      hint: `${TEST_NOT_FOUND_HINT} (django ids look like \`test_name (module.TestClass)\`)`,
      similar: ['test_mul (tests.test_basic.TestBasic.test_mul)'],
    },
  ],
  problem:
    '1 of 2 listed tests are not in the test log (2 test results parsed by django) — check the id format for this parser (docs/grading.md)',
  log: "+ : '>>>>> Start Test Output'\ntest_add (tests.test_basic.TestCalcAdd.test_add) ... ok\n<b>not markup</b>\n",
  log_bytes: 120,
  log_truncated: false,
};
const REPORT = {
  patch_is_None: false,
  patch_exists: true,
  patch_successfully_applied: true,
  resolved: false,
  tests_status: {
    FAIL_TO_PASS: { success: ['test_add (tests.test_basic.TestCalcAdd.test_add)'], failure: [] },
    PASS_TO_PASS: { success: [], failure: ['tests/test_basic.py::TestBasic::test_mul'] },
    FAIL_TO_FAIL: { success: [], failure: [] },
    PASS_TO_FAIL: { success: [], failure: [] },
  },
};

describe('episode page', () => {
  it('shows how it was graded: the problem first, parser, tests parsed, each test with its status and not-found hint, the log open', () => {
    const page = renderEpisodePage({
      result: { ...RESULT, report: REPORT, grading: GRADING },
      jobLink: '/queue/episodes/r1%7Ce1%7C0',
    });
    expect(page).toContain('<h3>How it was graded</h3>');
    expect(page).toContain(
      '<div class="warn grading-problem"><strong>Check this:</strong> 1 of 2 listed tests are not in the test log (2 test results parsed by django) — check the id format for this parser (docs/grading.md)</div>',
    );
    expect(page).toContain('<tr><td>parser</td><td>django <span class="muted">(eval.log_parser)</span></td></tr>');
    expect(page).toContain('<tr><td>tests parsed</td><td class="">2</td></tr>');
    expect(page).toContain(
      '<tr class="test"><td><code>test_add (tests.test_basic.TestCalcAdd.test_add)</code></td><td>FAIL_TO_PASS</td><td>PASSED</td>',
    );
    expect(page).toContain(
      '<td><code>tests/test_basic.py::TestBasic::test_mul</code></td><td>PASS_TO_PASS</td><td><span class="bad">not found</span></td>',
    );
    expect(page).toContain(
      `<td>${TEST_NOT_FOUND_HINT} (django ids look like \`test_name (module.TestClass)\`)<br>the log has: <code>test_mul (tests.test_basic.TestBasic.test_mul)</code></td>`,
    );
    expect(page).toContain('<details class="eval-log" open><summary>eval log (120 bytes)</summary>');
    expect(page).toContain('&lt;b&gt;not markup&lt;/b&gt;');
    expect(page).not.toContain('<b>not markup</b>');
  });

  it('cannot miss zero tests parsed; a grade without a problem keeps the log folded', () => {
    const zero = renderEpisodePage({
      result: {
        ...RESULT,
        report: REPORT,
        grading: {
          ...GRADING,
          tests_parsed: 0,
          problem: 'the pytest parser found 0 test results in the eval log',
          parser: 'pytest',
          parser_source: 'repository',
        },
      },
      jobLink: '/queue/x',
    });
    expect(zero).toContain(
      '<tr><td>tests parsed</td><td class="bad">0 — the parser found no test results in the log</td></tr>',
    );
    expect(zero).toContain('<strong>Check this:</strong> the pytest parser found 0 test results in the eval log');
    expect(zero).toContain('pytest <span class="muted">(default for the repository)</span>');
    const fine = renderEpisodePage({
      result: { ...RESULT, report: REPORT, grading: { ...GRADING, problem: null, log_truncated: true } },
      jobLink: '/queue/x',
    });
    expect(fine).not.toContain('Check this');
    expect(fine).toContain('<details class="eval-log"><summary>eval log (120 bytes, head and tail kept)</summary>');
  });

  it('renders without a grading block (ungraded results), escapes observations, shows attempts and their failures', () => {
    const page = renderEpisodePage({ result: RESULT, jobLink: '/queue/x' });
    expect(page).not.toContain('How it was graded');
    expect(page).not.toContain('<script>');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('SANDBOX_DEAD (infra): gone');
    expect(page).toContain('Empty patch.');
    expect(page).toContain('Not graded.');
  });

  it("shows a policy episode's turns: the reply as returned, finish reason, tokens, retries, format errors, the steps it ran", () => {
    const turn = (index: number, o: Partial<TurnRecord>): TurnRecord => ({
      index,
      sampling: { temperature: 0.7, max_completion_tokens: 256 },
      prompt_messages: 2 + 2 * index,
      message: { role: 'assistant', content: null },
      finish_reason: 'tool_calls',
      stop_reason: null,
      response_id: null,
      model: 'qwen',
      system_fingerprint: null,
      usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      tokens: null,
      logprobs: null,
      latency_ms: 850,
      retries: 0,
      retry_codes: [],
      slot_wait_ms: 0,
      steps: [],
      duration_ms: 900,
      ...o,
    });
    const turns = [
      turn(0, {
        message: {
          role: 'assistant',
          content: 'Let me <b>look</b>.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"command": "cat x"}' } },
          ],
        },
        steps: [0],
        retries: 2,
        retry_codes: ['POLICY_THROTTLED', 'POLICY_SERVER_ERROR'],
        slot_wait_ms: 1500,
      }),
      turn(1, {
        message: { role: 'assistant', content: 'Done.', reasoning_content: 'The file is fine.' },
        finish_reason: 'stop',
        format_error: { code: 'POLICY_FORMAT_ERROR', message: 'Your last reply did not call a tool.' },
        capture_problem: 'the server returned no token ids',
      }),
    ];
    const page = renderEpisodePage({
      result: {
        ...RESULT,
        steps: [{ ...RESULT.steps[0]!, turn: 0, tool_call_id: 'call_1' }],
        exit_status: 'exit_format',
        turns,
        tokens: { prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 },
        policy: {
          base_url: 'http://10.0.0.5:8000/v1',
          model: 'qwen',
          server_kind: 'vllm',
          tool_profile: 'sweagent',
          tools: [],
        },
      },
      jobLink: '/queue/x',
    });
    expect(page).toContain('<tr><td>exit status</td><td>exit_format</td></tr>');
    expect(page).toContain('<tr><td>turns</td><td>2</td></tr>');
    expect(page).toContain('<tr><td>tokens</td><td>200 prompt + 40 completion</td></tr>');
    expect(page).toContain('<tr><td>policy</td><td>qwen at http://10.0.0.5:8000/v1 (sweagent)</td></tr>');
    expect(page).toContain('<h3>Turn 0 · tool_calls</h3>');
    expect(page).toContain(
      '<div class="muted">100 + 20 tokens · request 850 ms · 2 retries (POLICY_THROTTLED, POLICY_SERVER_ERROR) · slot wait 1.50 s · max_completion_tokens 256 · no token ids · steps 0</div>',
    );
    expect(page).toContain('<pre class="reply">Let me &lt;b&gt;look&lt;/b&gt;.</pre>');
    expect(page).toContain('<pre class="tool-calls">call_1  bash({&quot;command&quot;: &quot;cat x&quot;})</pre>');
    expect(page).toContain('<h3>Turn 1 · stop</h3>');
    expect(page).toContain('no token ids (the server returned no token ids) · no steps');
    expect(page).toContain(
      '<div class="warn format-error"><strong>POLICY_FORMAT_ERROR</strong>: Your last reply did not call a tool.</div>',
    );
    expect(page).toContain('<pre class="reasoning">The file is fine.</pre>');
    expect(page).toMatch(/<div class="muted">exit 0 · 12 ms · turn 0<\/div>/);
    // A replay has no turns section.
    expect(renderEpisodePage({ result: RESULT, jobLink: '/queue/x' })).not.toContain('<h2>Turns</h2>');
  });
});
