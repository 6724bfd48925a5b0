/**
 * The integrity flag as the dashboard shows it (docs/adversarial-grading.md, "The integrity flag"): on the run
 * page a cell per result, on the episode page the flag and every finding. Results written before the flag
 * existed show a dash, not "clean": nothing was checked.
 */
import type { EpisodeResult } from '@rollout-fleet/shared';
import { type RawHtml, html } from './html.js';

/** `clean`, `suspect (CODE, …)` or `violated (CODE, …)`, classed for colour. */
export function integrityCell(result: EpisodeResult): RawHtml {
  const flag = result.integrity;
  if (flag === undefined) return html`–`;
  const cls = flag.verdict === 'violated' ? 'bad' : flag.verdict === 'suspect' ? 'suspect' : 'ok';
  const reasons = flag.reasons.length === 0 ? html`` : html` <small>(${flag.reasons.join(', ')})</small>`;
  return html`<span class="${cls} integrity-${flag.verdict}" data-integrity="${flag.verdict}">${flag.verdict}</span>${reasons}`;
}

/** The grader's findings, one row each; nothing when there are none. */
export function integrityFindings(result: EpisodeResult): RawHtml {
  const findings = result.grading?.integrity?.findings ?? [];
  const restored = result.grading?.integrity?.restored ?? [];
  if (findings.length === 0 && restored.length === 0) return html``;
  return html`<h2>Integrity</h2>
${
  findings.length === 0
    ? html``
    : html`<table class="integrity-findings"><thead><tr><th>code</th><th>severity</th><th>detail</th></tr></thead>
<tbody>${findings.map((f) => html`<tr><td>${f.code}</td><td class="${f.severity === 'violated' ? 'bad' : 'suspect'}">${f.severity}</td><td>${f.detail}</td></tr>`)}</tbody></table>`
}
${restored.length === 0 ? html`` : html`<p>Restored before the eval: ${restored.join(', ')}</p>`}`;
}
