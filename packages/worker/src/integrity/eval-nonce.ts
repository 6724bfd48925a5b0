/**
 * Markers the test output cannot forge (docs/adversarial-grading.md, "The result channel"): the worker draws a
 * nonce per eval and writes it to a file in the grading sandbox; the eval script reads it into a shell variable
 * (never exported, never on a command line, the file removed) before anything of the patch runs, and prints the
 * harness's start/end markers with it. The log parser then reads only what lies between the two markers that carry
 * the nonce — never the whole log — so a test printing a fake end marker, result lines at exit, or file names
 * that read as results gets nothing counted.
 */
import { randomBytes } from 'node:crypto';
import type { IntegrityFinding } from '@rollout-fleet/shared';
import { shellQuote } from '@rollout-fleet/sandbox';
import { END_TEST_OUTPUT, START_TEST_OUTPUT } from '../grading/log-markers.js';
import { parseTestOutput } from '../grading/parse-log.js';
import type { ParserName } from '../grading/types.js';

/** A fresh nonce: 128 random bits, hex. */
export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

/** The marker lines as they appear in the log (the eval runs under `set -x`, which prints them). */
export function nonceMarkers(nonce: string): { start: string; end: string } {
  return { start: `${START_TEST_OUTPUT} rf:${nonce}`, end: `${END_TEST_OUTPUT} rf:${nonce}` };
}

/** How the test command's runner is instrumented (result-channel.ts): a pytest plugin, a unittest hook, or not. */
export type ChannelMode = 'pytest' | 'unittest' | 'none';

export interface InstrumentOptions {
  /** File holding the nonce; read and removed by the script itself. */
  nonceFile: string;
  /** The channel's directory (key in, results out) and the grader's module directory; unused for mode `none`. */
  channelDir: string;
  graderDir: string;
  mode: ChannelMode;
}

const START_LINE = /^:\s+'>>>>> Start Test Output'\s*$/m;
const END_LINE = /^:\s+'>>>>> End Test Output'\s*$/m;

/**
 * The eval script with the nonce read first and the harness's marker lines carrying it; after the start marker,
 * the channel's variables for the test command (PYTHONPATH to the grader, the plugin in PYTEST_ADDOPTS). A script
 * without the harness's marker lines is returned with none: its log then has no marker with the nonce.
 */
export function instrumentEvalScript(script: string, o: InstrumentOptions): string {
  const read = `{ read -r RF_EVAL_NONCE < ${shellQuote(o.nonceFile)} && rm -f ${shellQuote(o.nonceFile)}; } 2>/dev/null || RF_EVAL_NONCE=unset`;
  const lines = script.split('\n');
  const at = lines[0]?.startsWith('#!') === true ? 1 : 0;
  lines.splice(at, 0, read);
  let text = lines.join('\n');
  const exports = channelExports(o);
  text = text.replace(START_LINE, () => `: ">>>>> Start Test Output rf:\${RF_EVAL_NONCE}"${exports}`);
  text = text.replace(END_LINE, () => `: ">>>>> End Test Output rf:\${RF_EVAL_NONCE}"`);
  return text;
}

function channelExports(o: InstrumentOptions): string {
  if (o.mode === 'none') return '';
  const grader = shellQuote(o.graderDir);
  return (
    `\nexport RF_CHANNEL=${shellQuote(o.channelDir)} RF_CHANNEL_MODE=${o.mode}` +
    ` PYTHONPATH=${grader}"\${PYTHONPATH:+:$PYTHONPATH}"` +
    ` PYTEST_ADDOPTS="-p rf_result_channel\${PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}"`
  );
}

export interface MarkedRegion {
  /** The test output between the two nonce markers; null when either is missing. */
  between: string | null;
  findings: IntegrityFinding[];
}

/**
 * The test output between the markers carrying `nonce`, and what is wrong around it: markers missing (the eval
 * died, timed out, or its script has none), marker text without the nonce inside the region (forged), result
 * lines after the end marker (printed by something the test command left running, or at exit after the marker).
 */
export function readMarkedRegion(log: string, nonce: string, parser: ParserName): MarkedRegion {
  const { start, end } = nonceMarkers(nonce);
  const lines = log.split('\n');
  const si = lines.findIndex((l) => l.includes(start));
  const ei = si < 0 ? -1 : lines.findIndex((l, i) => i > si && l.includes(end));
  if (si < 0 || ei < 0) {
    const which = si < 0 ? 'start' : 'end';
    return {
      between: null,
      findings: [
        {
          code: 'EVAL_MARKERS_MISSING',
          severity: 'violated',
          detail: `the ${which} marker carrying this eval's nonce is not in the log: the test output cannot be told from anything else`,
        },
      ],
    };
  }
  const inside = lines.slice(si + 1, ei);
  const findings: IntegrityFinding[] = [];
  const forged = inside.filter((l) => l.includes(START_TEST_OUTPUT) || l.includes(END_TEST_OUTPUT));
  if (forged.length > 0)
    findings.push({
      code: 'EVAL_MARKER_FORGED',
      severity: 'violated',
      detail: `${forged.length} marker line(s) without this eval's nonce inside the test output, first: ${forged[0]!.trim().slice(0, 160)}`,
    });
  const outside = Object.keys(parseTestOutput(lines.slice(ei + 1).join('\n'), parser));
  if (outside.length > 0)
    findings.push({
      code: 'RESULT_LINES_OUTSIDE_MARKERS',
      severity: 'violated',
      detail: `${outside.length} test result line(s) after the end marker, first: ${outside[0]!.slice(0, 160)}`,
    });
  return { between: inside.join('\n'), findings };
}

/** A log the harness's reader (parse-log.ts) reads as exactly `between`: no fallback to anything else. */
export function regionLog(between: string | null): string {
  return between === null ? '' : `${START_TEST_OUTPUT}\n${between}\n${END_TEST_OUTPUT}\n`;
}
