/**
 * The episode viewer: one server-rendered page per result — its steps (tool, arguments, command, replayed and
 * recorded observation, the diff where they differ, exit code, timing), the patch, the grading (SWE-bench's
 * report; the result's `grading` block: parser, tests parsed, each listed test's status with the not-found hint,
 * the eval log), and every attempt with its failure. Policy episodes add their turns: the model's reply as returned
 * (text, tool calls, reasoning), finish reason, tokens, request latency, retries, slot wait, format errors, and the
 * steps each turn ran. No scripts: long texts sit in <details> and <pre>.
 */
import { instanceLayout } from '@rollout-fleet/shared';
import type {
  EpisodeResult,
  FidelityStep,
  GradingDetails,
  StepRecord,
  ToolCall,
  TurnRecord,
} from '@rollout-fleet/shared';
import { type RawHtml, html } from './html.js';
import { formatDuration, page, percent } from './run-pages.js';
import { integrityCell, integrityFindings } from './integrity-flag.js';

export interface EpisodePageInput {
  result: EpisodeResult;
  /** The episode's recorded tool calls (from its job), when the job is still kept. */
  recorded?: readonly ToolCall[];
  /** Link to the job in Bull Board. */
  jobLink: string;
  /** Link to one of the episode's SWE-bench files (report.json, test_output.txt, …), served by the dashboard. */
  fileLink?: (name: string) => string;
}

const OUTCOME_TEXT = {
  report: 'completed: graded by its report.json',
  error:
    'an error: no report.json (the episode failed, was not graded, the patch did not apply, or the eval timed out)',
  empty_patch: 'an empty patch: not run, no directory',
} as const;

/**
 * The instance's directory in SWE-bench's evaluation tree, as `results --format swebench --out` writes it, with a
 * link per file and what the harness's run report counts it as.
 */
function swebenchFilesBlock(result: EpisodeResult, fileLink: (name: string) => string): RawHtml {
  const layout = instanceLayout(result);
  const names = Object.keys(layout.files).sort();
  return html`<h2>SWE-bench files</h2>
<p><code>${layout.dir}/</code> — SWE-bench's run report counts this instance as ${OUTCOME_TEXT[layout.outcome]}.</p>
${
  names.length === 0
    ? html``
    : html`<ul class="swebench-files">${names.map(
        (name) =>
          html`<li><a href="${fileLink(name)}">${name}</a> <span class="muted">${Buffer.byteLength(layout.files[name as keyof typeof layout.files] ?? '')} bytes</span></li>`,
      )}</ul>`
}`;
}

function pre(text: string, className = ''): RawHtml {
  return html`<pre class="${className}">${text}</pre>`;
}

/** A unified diff with its lines marked, so additions and removals read at a glance. */
function diffBlock(diff: string): RawHtml {
  const lines = diff.split('\n').map((line) => {
    const kind = line.startsWith('@@')
      ? 'hunk'
      : line.startsWith('+') && !line.startsWith('+++')
        ? 'add'
        : line.startsWith('-') && !line.startsWith('---')
          ? 'del'
          : '';
    return html`<span class="${kind}">${line}</span>\n`;
  });
  return html`<pre class="diff">${lines}</pre>`;
}

function stepBlock(step: StepRecord, verdict: FidelityStep | undefined, call: ToolCall | undefined): RawHtml {
  const recorded = call?.observation ?? verdict?.recorded;
  const facts = [
    `exit ${step.exit_code ?? '–'}`,
    formatMs(step.duration_ms),
    ...(step.timed_out ? ['timed out'] : []),
    ...(step.truncated ? [`output truncated (${step.output_bytes} bytes)`] : []),
    ...(step.error ? [`error ${step.error.code}`] : []),
    ...(step.turn === undefined ? [] : [`turn ${step.turn}`]),
  ].join(' · ');
  const state = verdict?.verdict ?? 'no_record';
  return html`<section class="step" id="step-${step.index}">
<h3>Step ${step.index} · ${step.tool} <span class="verdict-${state}">${state.replace('_', ' ')}</span></h3>
<div class="muted">${facts}${verdict?.rules ? ` · normalised: ${verdict.rules.join(', ')}` : ''}</div>
<details><summary>arguments</summary>${pre(JSON.stringify(step.args, null, 2))}</details>
${step.command === undefined ? html`` : html`<div>command</div>${pre(step.command, 'command')}`}
<div class="obs"><div><div>replayed observation</div>${pre(step.output, 'replayed')}</div>
<div><div>recorded observation</div>${recorded === undefined ? html`<p class="muted">none recorded</p>` : pre(recorded, 'recorded')}</div></div>
${verdict?.diff === undefined ? html`` : html`<div>diff (normalised; − recorded, + replayed)</div>${diffBlock(verdict.diff)}`}
</section>`;
}

/** One model turn of a policy episode: what the model answered and what became of it. */
function turnBlock(turn: TurnRecord): RawHtml {
  const usage = turn.usage;
  const facts = [
    usage === null ? 'no usage' : `${usage.prompt_tokens} + ${usage.completion_tokens} tokens`,
    `request ${formatMs(turn.latency_ms)}`,
    ...(turn.retries > 0 ? [`${turn.retries} retries (${turn.retry_codes.join(', ')})`] : []),
    ...(turn.slot_wait_ms >= 1 ? [`slot wait ${formatMs(turn.slot_wait_ms)}`] : []),
    `max_completion_tokens ${String(turn.sampling.max_completion_tokens ?? '–')}`,
    turn.tokens === null ? `no token ids${turn.capture_problem ? ` (${turn.capture_problem})` : ''}` : 'token ids kept',
    turn.steps.length === 0 ? 'no steps' : `steps ${turn.steps.join(', ')}`,
  ].join(' · ');
  const calls = turn.message.tool_calls ?? [];
  const content = typeof turn.message.content === 'string' ? turn.message.content : null;
  return html`<section class="turn" id="turn-${turn.index}">
<h3>Turn ${turn.index} · ${turn.finish_reason ?? 'no finish reason'}</h3>
<div class="muted">${facts}</div>
${turn.format_error === undefined ? html`` : html`<div class="warn format-error"><strong>${turn.format_error.code}</strong>: ${turn.format_error.message}</div>`}
${content === null || content === '' ? html`` : html`<div>reply</div>${pre(content, 'reply')}`}
${calls.length === 0 ? html`` : html`<div>tool calls</div>${pre(calls.map((c) => `${c.id}  ${c.function.name}(${c.function.arguments})`).join('\n'), 'tool-calls')}`}
${turn.message.reasoning_content === undefined ? html`` : html`<details><summary>reasoning</summary>${pre(turn.message.reasoning_content, 'reasoning')}</details>`}
</section>`;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** SWE-bench's report: each FAIL_TO_PASS / PASS_TO_PASS test with its outcome. */
function reportBlock(result: EpisodeResult): RawHtml {
  const report = result.report;
  if (report === null) return html`<p class="muted">Not graded.</p>`;
  const rows: RawHtml[] = [];
  for (const list of ['FAIL_TO_PASS', 'PASS_TO_PASS'] as const) {
    const outcome = report.tests_status?.[list];
    for (const name of outcome?.success ?? [])
      rows.push(html`<tr><td>${name}</td><td>${list}</td><td class="ok">success</td></tr>`);
    for (const name of outcome?.failure ?? [])
      rows.push(html`<tr><td>${name}</td><td>${list}</td><td class="bad">failure</td></tr>`);
  }
  const flags = html`<table class="kv"><tbody>
<tr><td>resolved</td><td>${String(report.resolved)}</td></tr><tr><td>patch exists</td><td>${String(report.patch_exists)}</td></tr>
<tr><td>patch applied</td><td>${String(report.patch_successfully_applied)}</td></tr></tbody></table>`;
  return html`${flags}${rows.length === 0 ? html`<p class="muted">No test statuses (nothing applied or ran).</p>` : html`<table class="tests"><thead><tr><th>test</th><th>list</th><th>status</th></tr></thead><tbody>${rows}</tbody></table>`}`;
}

/**
 * How the grade was reached: the problem first (zero tests parsed cannot be missed), then the parser and what it
 * found, every listed test with the status read from the log (or why it was not found), and the eval log — open
 * when there is a problem, since that is where the answer is.
 */
function gradingBlock(g: GradingDetails): RawHtml {
  const zeroParsed = g.tests_ran && g.tests_parsed === 0;
  const facts = html`<table class="kv grading-facts"><tbody>
<tr><td>parser</td><td>${g.parser} <span class="muted">(${g.parser_source === 'episode' ? 'eval.log_parser' : 'default for the repository'})</span></td></tr>
<tr><td>tests parsed</td><td class="${zeroParsed ? 'bad' : ''}">${g.tests_parsed}${zeroParsed ? ' — the parser found no test results in the log' : ''}</td></tr>
<tr><td>tests ran</td><td>${g.tests_ran ? 'yes' : 'no'}</td></tr>
<tr><td>timed out</td><td>${g.timed_out ? 'yes' : 'no'}</td></tr></tbody></table>`;
  const rows = g.tests.map((test) => {
    const note =
      test.hint === undefined
        ? html``
        : html`${test.hint}${test.similar === undefined ? html`` : html`<br>the log has: ${test.similar.map((id, i) => html`${i > 0 ? ', ' : ''}<code>${id}</code>`)}`}`;
    return html`<tr class="test"><td><code>${test.id}</code></td><td>${test.list}</td><td>${test.status ?? html`<span class="bad">not found</span>`}</td>
<td class="${test.outcome === 'success' ? 'ok' : test.outcome === 'failure' ? 'bad' : 'muted'}">${test.outcome}</td><td>${note}</td></tr>`;
  });
  const tests =
    rows.length === 0
      ? html`<p class="muted">The episode lists no FAIL_TO_PASS or PASS_TO_PASS tests.</p>`
      : html`<table class="graded-tests"><thead><tr><th>test</th><th>list</th><th>status in the log</th><th>counted as</th><th>note</th></tr></thead><tbody>${rows}</tbody></table>`;
  const logSummary = `eval log (${g.log_bytes} bytes${g.log_truncated ? ', head and tail kept' : ''})`;
  const log =
    g.log === ''
      ? html`<p class="muted">No eval log (the tests did not run).</p>`
      : html`<details class="eval-log"${g.problem === null ? html`` : html` open`}><summary>${logSummary}</summary>${pre(g.log, 'eval-log')}</details>`;
  return html`<h3>How it was graded</h3>
${g.problem === null ? html`` : html`<div class="warn grading-problem"><strong>Check this:</strong> ${g.problem}</div>`}
${facts}${tests}${log}`;
}

export function renderEpisodePage(input: EpisodePageInput): string {
  const { result } = input;
  const f = result.fidelity;
  const verdicts = new Map((f?.steps ?? []).map((step) => [step.index, step]));
  const title = `${result.instance_id}#${result.sample_index}`;
  const facts: Array<[string, string | number | RawHtml]> = [
    ['run', html`<a href="/runs/${encodeURI(result.run_id)}">${result.run_id}</a>`],
    ['episode', result.episode_id],
    ['status', result.status],
    ['resolved', result.resolved === null ? '–' : String(result.resolved)],
    ['reward', result.reward ?? '–'],
    ['integrity', integrityCell(result)],
    ['failure', result.failure ? `${result.failure.code} (${result.failure.class}): ${result.failure.message}` : '–'],
    ...(result.turns === undefined
      ? []
      : ([
          ['exit status', result.exit_status ?? '–'],
          ['turns', result.turns.length],
          [
            'tokens',
            result.tokens
              ? `${result.tokens.prompt_tokens} prompt + ${result.tokens.completion_tokens} completion`
              : '–',
          ],
          [
            'policy',
            result.policy ? `${result.policy.model} at ${result.policy.base_url} (${result.policy.tool_profile})` : '–',
          ],
        ] as Array<[string, string | number]>)),
    ['steps', result.steps.length],
    [
      'fidelity',
      f === undefined
        ? '–'
        : `${f.matched}/${f.compared} matched (${percent(f.ratio)}), ${f.no_record} without record${f.first_divergence === null ? '' : `, first divergence at step ${f.first_divergence}`}`,
    ],
    ['duration', formatDuration(result.timings.total_ms / 1000)],
    ['worker', result.worker_id],
    ['sandbox', result.sandbox_id ?? '–'],
    ['finished', result.finished_at],
    ['job', html`<a href="${input.jobLink}">Bull Board job</a>`],
  ];
  const attempts = result.attempts.map(
    (
      a,
    ) => html`<tr><td>${a.attempt}</td><td>${a.worker_id}</td><td>${a.sandbox_id ?? '–'}</td><td>${a.started_at}</td><td>${a.ended_at}</td>
<td class="${a.failure ? 'bad' : 'ok'}">${a.failure ? `${a.failure.code} (${a.failure.class}): ${a.failure.message}` : 'ok'}</td></tr>`,
  );
  const grading = result.grading;
  const body = html`<h1>Episode ${title}</h1>
<table class="kv"><tbody>${facts.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>
${
  result.turns === undefined
    ? html``
    : html`<h2>Turns</h2>
${result.turns.length === 0 ? html`<p class="muted">No turns.</p>` : result.turns.map(turnBlock)}`
}
<h2>Steps</h2>
${result.steps.length === 0 ? html`<p class="muted">No steps.</p>` : result.steps.map((step) => stepBlock(step, verdicts.get(step.index), input.recorded?.[step.index]))}
${integrityFindings(result)}
<h2>Patch</h2>
${result.patch === null ? html`<p class="muted">No patch.</p>` : result.patch.trim() === '' ? html`<p class="muted">Empty patch.</p>` : pre(result.patch, 'patch')}
<h2>Grading</h2>
${reportBlock(result)}
${grading === undefined ? html`` : gradingBlock(grading)}
${input.fileLink === undefined ? html`` : swebenchFilesBlock(result, input.fileLink)}
<h2>Attempts</h2>
<table class="attempts"><thead><tr><th>#</th><th>worker</th><th>sandbox</th><th>started</th><th>ended</th><th>outcome</th></tr></thead><tbody>${attempts}</tbody></table>`;
  return page(`Episode ${title} · rollout-fleet`, body, false);
}
