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

/**
 * Prefixed to the observation of the step after one that broke the shell, worded like SWE-agent's notes for
 * commands it cannot run (`Operation '…' is not supported by this environment.`).
 */
export function sessionRestartedNote(command: string, how: 'ended' | 'unresponsive'): string {
  const what = how === 'ended' ? 'ended the shell session' : 'could not be interrupted and the shell stopped answering';
  return (
    `The command '${command}' ${what}. A new shell session was started in the repository directory with the ` +
    "episode's environment and tools: variables, aliases and shell functions set in the old session are gone.\n"
  );
}

/** The observation of a step that could not run: the model broke its shell and no new one would start. */
export function noShellObservation(command: string): string {
  return `The command '${command}' was not run: the shell session ended and a new one could not be started.`;
}
