/**
 * Observation texts for steps that did not run normally, worded as SWE-agent words them
 * (tools.md §5), so a replayed trajectory reads like the reference agent's.
 */

export function timeoutObservation(command: string, timeoutS: number): string {
  return (
    `The command '${command}' was cancelled because it took more than ${formatSeconds(timeoutS)} seconds. ` +
    'Please try a different command that completes more quickly. Note: A common source of this error is if the ' +
    'command is interactive or requires user input (it is impossible to receive user input in the current ' +
    'environment, so the command will never complete).'
  );
}

export function syntaxErrorObservation(bashStdout: string, bashStderr: string): string {
  return (
    'Your bash command contained syntax errors and was NOT executed. Please fix the syntax errors and try again. ' +
    'This can be the result of not adhering to the syntax for multi-line commands. Here is the output of `bash -n`:\n' +
    `${bashStdout}\n${bashStderr}`
  );
}

function formatSeconds(seconds: number): string {
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}
