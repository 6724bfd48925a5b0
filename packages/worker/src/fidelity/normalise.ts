/**
 * The fair normalisation applied to a recorded and a replayed observation before they are compared
 * (docs/fidelity.md documents each rule with an example that must match and one that must still differ).
 * A rule removes presentation the recording added or that depends on the machine, never content: numbers, window
 * bounds, blank lines inside the text, dashes and wording are compared as they are.
 */

export const FIDELITY_RULES_VERSION = '1';

/** How the recording stored observations. */
export interface RecordingFormat {
  /** `swe-agent`: SWE-agent's next-step template may wrap it; `mini-swe-agent`: `<returncode>` + `<output>`. */
  readonly agent: 'swe-agent' | 'mini-swe-agent' | 'generic';
  /** Both ends were stripped (SWE-agent through a pty, SWE-ReX before 1.3). */
  readonly stripEnds: boolean;
}

export interface Normalised {
  text: string;
  /** Rules that changed the text. */
  rules: string[];
}

type Rule = (text: string) => string;

function apply(state: Normalised, name: string, rule: Rule): Normalised {
  const text = rule(state.text);
  return text === state.text ? state : { text, rules: [...state.rules, name] };
}

/** `line-endings`: CRLF → LF (a pty turns every LF into CRLF). */
export const lineEndings: Rule = (text) => text.replace(/\r\n/g, '\n');

/** `ansi-colour`: SGR escape sequences (colours, bold) removed. */
// eslint-disable-next-line no-control-regex -- ESC starts the sequence
export const ansiColour: Rule = (text) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** `trailing-whitespace`: spaces and tabs at the end of each line, and newlines at the end of the text. */
export const trailingWhitespace: Rule = (text) => text.replace(/[ \t]+$/gm, '').replace(/\n+$/, '');

/** `strip-ends`: whitespace at both ends (only for recordings that were stripped). */
export const stripEnds: Rule = (text) => text.trim();

const FOOTER = /\n?\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)\nbash-\$\s*$/;
const NO_OUTPUT = 'Your command ran successfully and did not produce any output.';

/**
 * `template` (recorded side, SWE-agent): the next-step template around an observation in `history` — a leading
 * `OBSERVATION:` line, the `(Open file: …)` / `(Current directory: …)` / `bash-$` footer — removed; the message
 * standing for an empty output becomes empty.
 */
export const sweAgentTemplate: Rule = (text) => {
  let body = text.replace(/^OBSERVATION:\n/, '').replace(FOOTER, '');
  if (body.trim() === NO_OUTPUT) body = '';
  return body;
};

const FIND_FILE_HEADER = /^Found \d+ matches for "[^\n]*" in [^\n]*:$/;
const DIRECTORY_VIEW_HEADER =
  /^Here's the files and directories up to 2 levels deep in [^\n]*, excluding hidden items:$/;

/**
 * `unordered-lines`: `find_file` results and `str_replace_editor view <dir>` listings come in file-system order,
 * which differs between machines: the lines after the header are compared sorted.
 */
export const unorderedListing: Rule = (text) => {
  const lines = text.split('\n');
  const header = lines[0] ?? '';
  if (!FIND_FILE_HEADER.test(header) && !DIRECTORY_VIEW_HEADER.test(header)) return text;
  return [header, ...lines.slice(1).sort()].join('\n');
};

const LINT_HEADER = 'Your proposed edit has introduced new syntax error(s).';

/**
 * `lint-codes`: in a lint failure, `- E999 SyntaxError: …` lines keep only their code — the message wording comes
 * from the flake8 and Python versions of the machine, not from the edit.
 */
export const lintCodes: Rule = (text) => {
  if (!text.includes(LINT_HEADER) || !text.includes('ERRORS:')) return text;
  return text.replace(/^- ([EFWC]\d{3}) .*$/gm, '- $1');
};

/** One recorded mini-swe-agent observation, parsed; undefined when it is not in the template's shape. */
export interface MiniObservation {
  returncode: string;
  /** The whole output, or head and tail when the recording elided the middle. */
  output?: string;
  head?: string;
  tail?: string;
}

export function parseMiniObservation(text: string): MiniObservation | undefined {
  const code = /^\s*<returncode>(-?\d+)<\/returncode>/.exec(text);
  if (!code) return undefined;
  const returncode = code[1] ?? '';
  const whole = /<output>\n?([\s\S]*?)\n?<\/output>\s*$/.exec(text);
  if (whole) return { returncode, output: whole[1] ?? '' };
  const head = /<output_head>\n?([\s\S]*?)\n?<\/output_head>/.exec(text);
  const tail = /<output_tail>\n?([\s\S]*?)\n?<\/output_tail>/.exec(text);
  if (head && tail) return { returncode, head: head[1] ?? '', tail: tail[1] ?? '' };
  return undefined;
}

/**
 * `mini-output`: a mini-swe-agent observation is its return code and output; both sides are written
 * `returncode N` + newline + output. When the recording kept only head and tail, the replay's output is cut to
 * the same head and tail lengths.
 */
export function miniCanonical(
  recorded: string,
  replayedOutput: string,
  exitCode: number | null,
): { recorded: string; replayed: string } | undefined {
  const parsed = parseMiniObservation(recorded);
  if (parsed === undefined) return undefined;
  const replayedCode = `returncode ${exitCode ?? -1}\n`;
  const recordedCode = `returncode ${parsed.returncode}\n`;
  if (parsed.output !== undefined)
    return { recorded: recordedCode + parsed.output, replayed: replayedCode + replayedOutput };
  const head = parsed.head ?? '';
  const tail = parsed.tail ?? '';
  return {
    recorded: `${recordedCode}${head}\n[…]\n${tail}`,
    replayed: `${replayedCode}${replayedOutput.slice(0, head.length)}\n[…]\n${tail.length > 0 ? replayedOutput.slice(-tail.length) : ''}`,
  };
}

/** Rules applied to both sides, in order, after the side-specific ones. */
export function normaliseCommon(text: string, format: RecordingFormat, already: readonly string[] = []): Normalised {
  let state: Normalised = { text, rules: [...already] };
  state = apply(state, 'line-endings', lineEndings);
  state = apply(state, 'ansi-colour', ansiColour);
  if (format.stripEnds) state = apply(state, 'strip-ends', stripEnds);
  state = apply(state, 'trailing-whitespace', trailingWhitespace);
  state = apply(state, 'unordered-lines', unorderedListing);
  state = apply(state, 'lint-codes', lintCodes);
  return state;
}

export function normaliseRecorded(text: string, format: RecordingFormat): Normalised {
  let state = apply({ text, rules: [] }, 'line-endings', lineEndings);
  if (format.agent === 'swe-agent') state = apply(state, 'template', sweAgentTemplate);
  return normaliseCommon(state.text, format, state.rules);
}

/** How an episode's recorded observations were written, from the tool bundle it names. */
export function recordingFormatFor(
  toolBundle: { name: 'swe-agent'; pty_observations?: boolean } | { name: 'mini-swe-agent' } | undefined,
): RecordingFormat {
  if (toolBundle === undefined) return { agent: 'generic', stripEnds: false };
  if (toolBundle.name === 'mini-swe-agent') return { agent: 'mini-swe-agent', stripEnds: false };
  return { agent: 'swe-agent', stripEnds: toolBundle.pty_observations === true };
}
