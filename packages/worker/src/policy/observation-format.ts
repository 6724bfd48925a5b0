/**
 * How a command's output reads to the model, per tool profile. SWE-agent's texts are the ones its default
 * configuration shows (tools.md §5.9), because a policy trained on them expects them; mini-swe-agent's layout
 * follows its swebench configuration (policy-loop.md §4), with our own wording of the warning.
 */

/** SWE-agent `max_observation_length`. */
export const SWEAGENT_MAX_OBSERVATION_CHARS = 100_000;
/** mini-swe-agent keeps outputs whole below this many characters, else head and tail of half of it each. */
export const MINI_MAX_OUTPUT_CHARS = 10_000;
const MINI_KEPT_CHARS = 5_000;

export const EMPTY_OUTPUT_OBSERVATION = 'Your command ran successfully and did not produce any output.';

/** SWE-agent's next-step template: empty output message, clipping note above 100 000 characters. */
export function clipSweAgentObservation(output: string): string {
  if (output.trim() === '') return EMPTY_OUTPUT_OBSERVATION;
  if (output.length > SWEAGENT_MAX_OBSERVATION_CHARS) {
    const elided = output.length - SWEAGENT_MAX_OBSERVATION_CHARS;
    return (
      `Observation: ${output.slice(0, SWEAGENT_MAX_OBSERVATION_CHARS)}<response clipped><NOTE>Observations should not exceeded ` +
      `${SWEAGENT_MAX_OBSERVATION_CHARS} characters. ${elided} characters were elided. Please try a different command that produces ` +
      'less output or use head/tail/grep/redirect the output to a file. Do not use interactive pagers.</NOTE>'
    );
  }
  return `OBSERVATION:\n${output}`;
}

/** `<returncode>` + `<output>`; long outputs as head, elided count and tail. */
export function miniObservation(command: { output: string; exitCode: number | null }): string {
  const returncode = `<returncode>${command.exitCode ?? -1}</returncode>\n`;
  const { output } = command;
  if (output.length < MINI_MAX_OUTPUT_CHARS) return `${returncode}<output>\n${output}</output>`;
  const elided = output.length - 2 * MINI_KEPT_CHARS;
  return (
    returncode +
    '<warning>\nThe output was too long and has been shortened. Use a command that prints less (head, tail, grep, or ' +
    'redirect to a file and read parts of it) instead of repeating this one.\n</warning>\n' +
    `<output_head>\n${output.slice(0, MINI_KEPT_CHARS)}\n</output_head>\n` +
    `<elided_chars>\n${elided} characters elided\n</elided_chars>\n` +
    `<output_tail>\n${output.slice(-MINI_KEPT_CHARS)}\n</output_tail>`
  );
}

/** The seed integration shows the command's output as it is; only a runaway output is clipped (head and tail). */
export function seedObservation(output: string): string {
  if (output.length <= SWEAGENT_MAX_OBSERVATION_CHARS) return output;
  const half = SWEAGENT_MAX_OBSERVATION_CHARS / 2;
  return `${output.slice(0, half)}\n[... ${output.length - 2 * half} characters elided ...]\n${output.slice(-half)}`;
}
