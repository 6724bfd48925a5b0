/**
 * A replayed step's output as the recording agent would have stored it as the observation (windowed-tools spec
 * §10, §11): the comparison is between like and like. Each transformation is the agent's own, by release line.
 */
import type { SweAgentToolBundle } from '@rollout-fleet/shared';

export const RETRY_TOKEN = '###SWE-AGENT-RETRY-WITH-OUTPUT###';
export const V1_SUBMISSION_MARKER = '<<SWE_AGENT_SUBMISSION>>';
const V0_SUBMISSION = /<<SUBMISSION\|\|(.*)\|\|SUBMISSION>>/s;

/** Python's str.splitlines() separators (file, group and record separators included). */
// eslint-disable-next-line no-control-regex -- the control characters are exactly what Python splits on
const PY_LINE_BREAKS = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

export interface AgentView {
  text: string;
  /** Names of the transformations that changed the text (docs/fidelity.md, "agent view"). */
  rules: string[];
}

/** `"\n".join(text.splitlines())`: drops the final newline, turns every line break into LF. */
export function splitlinesJoin(text: string): string {
  const parts = text.split(PY_LINE_BREAKS);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts.join('\n');
}

/** Does this output carry a v1 submission (the agent then reads the patch file)? */
export function hasV1Submission(output: string): boolean {
  return output.includes(V1_SUBMISSION_MARKER);
}

/**
 * @param patchFile the content of the patch file `submit` wrote (`/root/model.patch`), when the output carries the
 *   v1 marker: SWE-agent 1.0+ stores that file as the observation.
 */
export function sweAgentObservation(
  raw: string,
  bundle: Pick<SweAgentToolBundle, 'version'>,
  patchFile?: string,
): AgentView {
  const rules: string[] = [];
  let text = raw;
  const { version } = bundle;
  if (version.startsWith('0.')) {
    const submission = V0_SUBMISSION.exec(text);
    if (submission) {
      // The text between the markers is the submission and, until 0.7, the observation; 0.7 records "".
      text = version === '0.7' ? '' : (submission[1] ?? '');
      rules.push('agent-submission');
    }
    if (version === '0.6' || version === '0.6.1' || version === '0.7') {
      const joined = splitlinesJoin(text);
      if (joined !== text) rules.push('agent-splitlines');
      text = joined;
    }
    return { text, rules };
  }
  if (text.includes(RETRY_TOKEN)) {
    text = text.split(RETRY_TOKEN).join('');
    rules.push('agent-retry-token');
  }
  if (hasV1Submission(text)) {
    const between = text.split(V1_SUBMISSION_MARKER);
    if (version === '1.0-dev' && between.length >= 3) {
      // Development builds took the submission from stdout, between the two markers (7d7e38dc read the file).
      text = between[1] ?? '';
    } else if (patchFile !== undefined) {
      text = patchFile;
    } else if (between.length >= 3) {
      text = (between[1] ?? '').replace(/^\n/, '');
    }
    rules.push('agent-submission');
  }
  return { text, rules };
}
