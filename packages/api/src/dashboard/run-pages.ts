/** Server-rendered run pages: what Bull Board cannot show (a run's counts, resolved rate, ETA, recent results). */
import type { EpisodeResult, RunStatus } from '@rollout-fleet/shared';
import { RawHtml, html } from './html.js';
import { integrityCell } from './integrity-flag.js';

export interface RunListEntry {
  runId: string;
  createdAt: string | null;
  total: number;
  done: number;
  completed: number;
  failed: number;
  resolved: number;
  cancelled: boolean;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse}
td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left;vertical-align:top}th{background:#f4f4f4}
.kv td:first-child{color:#666}.ok{color:#16794a}.bad{color:#b3261e}nav a{margin-right:12px}
pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-all;margin:4px 0}
.step{border:1px solid #ddd;border-radius:4px;margin:12px 0;padding:8px 12px}.step h3{margin:0 0 6px;font-size:15px}
.obs{display:grid;grid-template-columns:1fr 1fr;gap:12px}.muted{color:#777}.add{background:#e6ffed}.del{background:#ffeef0}
.hunk{color:#6f42c1}.verdict-match{color:#16794a}.verdict-differs{color:#b3261e}.verdict-no_record{color:#777}
.warn{background:#fff4e5;border:1px solid #f0b45b;border-radius:4px;padding:6px 10px;margin:6px 0}.suspect{color:#a15c00}`;

/**
 * An unresolved result whose tests ran but whose grade the parser could not read (zero tests parsed, listed ids
 * not in the log) is most likely a mistake in the episode, not in the patch: flag it where results are listed.
 */
function gradingFlag(r: EpisodeResult): RawHtml {
  const g = r.grading;
  if (g === undefined || !g.tests_ran || g.problem === null) return html``;
  const missing = g.tests.filter((test) => test.status === null).length;
  if (g.tests_parsed > 0 && missing === 0) return html``;
  const what = g.tests_parsed === 0 ? '0 tests parsed' : `${missing} test(s) not in the log`;
  return html` <small class="bad grading-flag" title="${g.problem}">(${what} — see the episode)</small>`;
}

/** Seconds between automatic reloads of the run pages. */
export const REFRESH_S = 5;

export function page(title: string, body: RawHtml, refresh: boolean): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
${refresh ? html`<meta http-equiv="refresh" content="${REFRESH_S}">` : html``}
<style>${new RawHtml(STYLE)}</style></head>
<body><nav><a href="/">Bull Board</a><a href="/runs">Runs</a><a href="/metrics">Metrics</a></nav>
${body}</body></html>`.value;
}

export function percent(rate: number | null): string {
  return rate === null ? '–' : `${(rate * 100).toFixed(1)}%`;
}

export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function renderRunsIndex(runs: readonly RunListEntry[]): string {
  const rows = runs.map(
    (
      r,
    ) => html`<tr><td><a href="/runs/${encodeURI(r.runId)}">${r.runId}</a>${r.cancelled ? html` <span class="bad">(cancelled)</span>` : html``}</td><td>${r.createdAt ?? '–'}</td>
<td>${r.done}/${r.total}</td><td>${r.completed}</td><td>${r.failed}</td><td>${r.resolved}</td>
<td>${percent(r.completed > 0 ? r.resolved / r.completed : null)}</td></tr>`,
  );
  const body = html`<h1>Runs</h1>
${
  runs.length === 0
    ? html`<p>No runs yet.</p>`
    : html`<table><thead><tr><th>run</th><th>created</th><th>done</th><th>completed</th><th>failed</th><th>resolved</th><th>resolved rate</th></tr></thead>
<tbody>${rows}</tbody></table>`
}`;
  return page('Runs · rollout-fleet', body, true);
}

export interface RunPageInput {
  status: RunStatus;
  recent: readonly EpisodeResult[];
  /** Bull Board link of one job, or undefined when the job is not in a shown queue. */
  jobLink: (result: EpisodeResult) => string | undefined;
  /** The episode viewer's page of one result. */
  viewerLink: (result: EpisodeResult) => string;
  /** For an unknown run: the closest known run ids (a typo in the address). */
  didYouMean?: readonly string[];
}

function fidelityFacts(status: RunStatus): Array<[string, string | number]> {
  const f = status.fidelity;
  if (f.replayed === 0) return [];
  const divergences = Object.entries(f.firstDivergence).filter(([bucket, count]) => bucket !== 'none' && count > 0);
  return [
    ['replayed without divergence', `${f.clean} / ${f.replayed} (${percent(f.cleanShare)})`],
    ['replayed steps matching the record', `${f.stepsMatched} / ${f.stepsCompared} (${percent(f.stepRatio)})`],
    [
      'first divergence at step',
      divergences.length === 0 ? '–' : divergences.map(([bucket, count]) => `${bucket}: ${count}`).join(', '),
    ],
  ];
}

/** Policy episodes among `results`: exit statuses by count, token totals, turns. Undefined when there are none. */
export interface PolicySummary {
  episodes: number;
  exitStatuses: Array<[string, number]>;
  turns: { total: number; mean: number; max: number };
  tokens: { prompt: number; completion: number; total: number };
}

export function summarizePolicyResults(results: readonly EpisodeResult[]): PolicySummary | undefined {
  const policy = results.filter((r) => r.policy !== undefined);
  if (policy.length === 0) return undefined;
  const statuses = new Map<string, number>();
  for (const r of policy) {
    const status = r.status === 'failed' ? `failed (${r.failure?.code ?? 'unknown'})` : (r.exit_status ?? '–');
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const turnCounts = policy.map((r) => r.turns?.length ?? 0);
  const sum = (f: (r: EpisodeResult) => number): number => policy.reduce((n, r) => n + f(r), 0);
  return {
    episodes: policy.length,
    exitStatuses: [...statuses].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    turns: {
      total: turnCounts.reduce((a, b) => a + b, 0),
      mean: turnCounts.reduce((a, b) => a + b, 0) / policy.length,
      max: Math.max(...turnCounts),
    },
    tokens: {
      prompt: sum((r) => r.tokens?.prompt_tokens ?? 0),
      completion: sum((r) => r.tokens?.completion_tokens ?? 0),
      total: sum((r) => r.tokens?.total_tokens ?? 0),
    },
  };
}

function renderPolicySummary(summary: PolicySummary, shown: number): RawHtml {
  const facts: Array<[string, string | number]> = [
    ['policy episodes', summary.episodes],
    ['turns', `${summary.turns.total} (mean ${summary.turns.mean.toFixed(1)}, max ${summary.turns.max})`],
    ['prompt tokens', summary.tokens.prompt.toLocaleString('en-US')],
    ['completion tokens', summary.tokens.completion.toLocaleString('en-US')],
    ['total tokens', summary.tokens.total.toLocaleString('en-US')],
  ];
  return html`<h2>Policy episodes</h2>
<p><small>Over the ${shown} most recent results.</small></p>
<table class="kv"><tbody>${facts.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>
<h3>Exit statuses</h3>
<table><thead><tr><th>exit status</th><th>episodes</th></tr></thead>
<tbody>${summary.exitStatuses.map(([status, count]) => html`<tr><td>${status}</td><td>${count}</td></tr>`)}</tbody></table>`;
}

export function renderRunPage(input: RunPageInput): string {
  const { status, recent } = input;
  if (!status.exists) {
    const guesses = input.didYouMean ?? [];
    const guess =
      guesses.length === 0
        ? html``
        : html` Did you mean ${guesses.map((id, i) => html`${i > 0 ? ' or ' : ''}<a href="/runs/${encodeURI(id)}">${id}</a>`)}?`;
    return page(
      `Run ${status.runId} · rollout-fleet`,
      html`<h1>Run ${status.runId}</h1><p>Unknown run.${guess}</p>`,
      false,
    );
  }
  const facts: Array<[string, string | number]> = [
    ['created', status.createdAt ?? '–'],
    ['done', `${status.done} / ${status.total}`],
    ['completed', status.completed],
    ['failed', status.failed],
    ['resolved', status.resolved],
    ['resolved rate', percent(status.resolvedRate)],
    ['active', status.active],
    ['waiting', status.waiting],
    ...(status.notEnqueued > 0
      ? [
          [
            'not enqueued yet',
            `${status.notEnqueued} (${status.submitting ? 'a submit is enqueueing them' : status.cancelled ? 'never: the run was cancelled' : 'the submit was interrupted: submit again to resume'})`,
          ] as [string, string],
        ]
      : []),
    ['retrying', status.retrying],
    ['duplicates dropped', status.duplicates],
    ['throughput', status.throughputPerS === null ? '–' : `${(status.throughputPerS * 60).toFixed(1)} / min`],
    ['ETA', formatDuration(status.etaS)],
    ...fidelityFacts(status),
  ];
  const policy = summarizePolicyResults(recent);
  const rows = recent.map((r) => {
    const link = input.jobLink(r);
    const name = `${r.instance_id}#${r.sample_index}`;
    const resolvedCell =
      r.resolved === null
        ? html`–`
        : r.resolved
          ? html`<span class="ok">yes</span>`
          : html`<span class="bad">no</span>${gradingFlag(r)}`;
    const fidelity =
      r.fidelity === undefined || r.fidelity.compared === 0 ? '–' : `${r.fidelity.matched}/${r.fidelity.compared}`;
    return html`<tr><td><a class="viewer" href="${input.viewerLink(r)}">${name}</a>${link === undefined ? html`` : html` <small>(<a href="${link}">job</a>)</small>`}</td>
<td class="${r.status === 'failed' ? 'bad' : ''}">${r.status}${r.failure ? ` (${r.failure.code})` : ''}</td>
<td>${resolvedCell}</td><td>${r.reward ?? '–'}</td><td>${integrityCell(r)}</td><td>${r.steps.length}</td><td>${fidelity}</td>
${policy === undefined ? html`` : html`<td>${r.turns?.length ?? '–'}</td><td>${r.tokens ? r.tokens.total_tokens.toLocaleString('en-US') : '–'}</td><td>${r.exit_status ?? '–'}</td>`}
<td>${formatDuration(r.timings.total_ms / 1000)}</td><td>${r.finished_at}</td></tr>`;
  });
  const body = html`<h1>Run ${status.runId}${status.cancelled ? ' (cancelled)' : ''}</h1>
<table class="kv"><tbody>${facts.map(([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`)}</tbody></table>
${policy === undefined ? html`` : renderPolicySummary(policy, recent.length)}
<h2>Recent results</h2>
${
  recent.length === 0
    ? html`<p>No results yet.</p>`
    : html`<table><thead><tr><th>instance</th><th>status</th><th>resolved</th><th>reward</th><th>integrity</th><th>steps</th><th>fidelity</th>
${policy === undefined ? html`` : html`<th>turns</th><th>tokens</th><th>exit status</th>`}<th>duration</th><th>finished</th></tr></thead>
<tbody>${rows}</tbody></table>`
}
<p><small>Refreshes every ${REFRESH_S} s. JSON: <a href="/api/runs/${encodeURI(status.runId)}">/api/runs/${status.runId}</a></small></p>`;
  // A cancelled run stops changing once its running episodes stopped.
  return page(
    `Run ${status.runId} · rollout-fleet`,
    body,
    status.done < status.total && !(status.cancelled && status.active === 0),
  );
}
