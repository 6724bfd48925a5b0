"""One named bash session: SWE-ReX 1.4 `BashSession` semantics (swerex-protocol.md §6).

Markers, message formats and timings follow the reference so observations are byte-identical:
PS1 `SHELLPS1PREFIX`, fallback terminator `UNIQUESTRING29234`, exit-code sentinel
`EXITCODESTART<n>EXITCODEEND`, 0.3 s startup pause, 1 s / 0.1 s exit-code waits, 0.2 s interrupt pauses.
"""

import os
import re
import time

from rex_bash_split import Unsupported, split_bash_command
from rex_errors import (
    TIMEOUT,
    BashIncorrectSyntaxError,
    CommandTimeoutError,
    NoExitCodeError,
    NonZeroExitCodeError,
)
from rex_pty import PtyProcess
import rex_stall

PS1 = "SHELLPS1PREFIX"
UNIQUE_STRING = "UNIQUESTRING29234"
_EXIT_PREFIX = "EXITCODESTART"
_EXIT_SUFFIX = "EXITCODEEND"
_ANSI_ESCAPE = re.compile(r"\x1B[@-_][0-?]*[ -/]*[@-~]")


def clean_output(text):
    return _ANSI_ESCAPE.sub("", text).replace("\r\n", "\n")


def check_bash_syntax(command):
    """`bash -n` on the command, fed on stdin exactly as the reference's quoted heredoc would feed it.

    The reference runs `/usr/bin/env bash -n << 'SOUNIQUEEOF'` through /bin/sh; piping the same text into
    `bash -n` directly gives the same exit status and messages with two fewer exec()s per command.
    """
    import subprocess  # lazily: keeps server start-up (time to first /is_alive) short

    # argv[0] "bash" (as `env bash` gives) so messages read "bash: line N: ..." like the reference.
    result = subprocess.run(["bash", "-n"], executable=_bash_path(), input=(command + "\n").encode("utf-8", "surrogateescape"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if result.returncode == 0:
        return
    stdout = result.stdout.decode(errors="backslashreplace")
    stderr = result.stderr.decode(errors="backslashreplace")
    message = "Error (exit code {}) while checking bash command \n{!r}\n---- Stderr ----\n{}\n---- Stdout ----\n{}".format(
        result.returncode, command, stderr, stdout
    )
    raise BashIncorrectSyntaxError(message, extra_info={"bash_stdout": stdout, "bash_stderr": stderr})


_BASH = []


def _bash_path():
    if not _BASH:
        import shutil

        _BASH.append(shutil.which("bash") or "/bin/bash")
    return _BASH[0]


def _observation(output, exit_code, expect_string):
    return {"output": output, "exit_code": exit_code, "failure_reason": "", "expect_string": expect_string, "session_type": "bash"}


class BashSession(object):
    def __init__(self, request):
        self.request = request
        self._shell = None

    @property
    def shell(self):
        if self._shell is None:
            raise RuntimeError("shell not initialized")
        return self._shell

    def start(self):
        env = dict(os.environ)
        env.update({"PS1": PS1, "PS2": "", "PS0": "", "TERM": "dumb"})
        self._shell = PtyProcess(["/usr/bin/env", "bash"], env)
        time.sleep(0.3)
        commands = []
        if self.request.startup_source:
            commands += ["source " + path for path in self.request.startup_source] + ["sleep 0.3"]
        commands += ["export PS1='{}'".format(PS1), "export PS2=''", "export PS0=''"]
        self.shell.sendline(" ; ".join(commands))
        self.shell.expect([PS1], self.request.startup_timeout)
        return {"output": clean_output(self.shell.before), "session_type": "bash"}

    def run(self, action, stall=None):
        """`stall`: the vefaas-local `shellStall` fault for this request (rex_stall.py), or None."""
        if action.action_type == "bash_interrupt":
            return self._interrupt(action)
        if action.is_interactive_command or action.is_interactive_quit:
            return self._run_interactive(action)
        observation = self._run_normal(action, stall)
        if action.check == "raise" and observation["exit_code"] != 0:
            message = "Command {!r} failed with exit code {}. Here is the output:\n{!r}".format(
                action.command, observation["exit_code"], observation["output"]
            )
            if action.error_msg:
                message = "{}: {}".format(action.error_msg, message)
            raise NonZeroExitCodeError(message)
        return observation

    def _run_normal(self, action, stall=None):
        shell = self.shell
        check_bash_syntax(action.command)
        try:
            command = " ; ".join(split_bash_command(action.command))
            patterns = list(action.expect) + [PS1]
        except Unsupported:
            command = action.command + "\n TMPEXITCODE=$? ; sleep 0.1; echo -n '{}' ; (exit $TMPEXITCODE)".format(UNIQUE_STRING)
            patterns = [UNIQUE_STRING]
        shell.sendline(command)
        try:
            index = shell.expect(patterns, action.timeout)
        except TIMEOUT:
            raise CommandTimeoutError("timeout after {} seconds while running command {!r}".format(action.timeout, command))
        matched = patterns[index]
        output = clean_output(shell.before)
        if action.check == "ignore":
            return _observation(output, None, matched)
        if rex_stall.applies(stall, action.command):
            rex_stall.freeze(shell.pid, stall["ms"])
        try:
            shell.sendline("\necho {}$?{}".format(_EXIT_PREFIX, _EXIT_SUFFIX))
            try:
                shell.expect([_EXIT_SUFFIX], 1)
            except TIMEOUT:
                raise NoExitCodeError("timeout while getting exit code")
            raw = clean_output(shell.before)
            codes = re.findall(_EXIT_PREFIX + "([0-9]+)", raw)
            if len(codes) != 1:
                raise NoExitCodeError(
                    "failed to parse exit code from output {!r} (command: {!r}, matches: {})".format(raw, command, codes)
                )
            output += raw.split(_EXIT_PREFIX)[0]
            exit_code = int(codes[0])
            try:
                shell.expect([PS1], 0.1)
            except TIMEOUT:
                raise CommandTimeoutError("Timeout while getting PS1 after exit code extraction")
            output = output.replace(UNIQUE_STRING, "").replace(PS1, "")
        except Exception:
            if action.check == "raise":
                raise
            exit_code = None
        return _observation(output, exit_code, matched)

    def _run_interactive(self, action):
        shell = self.shell
        shell.sendline(action.command)
        patterns = list(action.expect) + [PS1]
        try:
            index = shell.expect(patterns, action.timeout)
        except TIMEOUT:
            raise CommandTimeoutError(
                "timeout after {} seconds while running command {!r}".format(action.timeout, action.command)
            )
        output = clean_output(shell.before)
        if action.is_interactive_quit:
            shell.setecho(False)
            shell.sendline("stty -echo; echo '{}'".format(UNIQUE_STRING))
            shell.expect([UNIQUE_STRING], 1)
            shell.expect([PS1], 1)
        else:
            output = output.lstrip()
            if output.startswith(action.command):
                output = output[len(action.command):]
            output = output.strip()
        return _observation(output, 0, patterns[index])

    def _interrupt(self, action):
        shell = self.shell
        patterns = list(action.expect) + [PS1]
        output = ""
        for _ in range(action.n_retry):
            shell.sendcontrol("c")
            try:
                index = shell.expect(patterns, action.timeout)
            except Exception:
                time.sleep(0.2)
                continue
            output += clean_output(shell.before)
            output += clean_output(shell.read_following(0.5))
            return _observation(output.strip(), 0, patterns[index])
        # Ctrl-C did not bring the prompt back: stop the job and kill it from the shell.
        try:
            shell.sendcontrol("z")
            shell.expect(patterns, action.timeout)
            output += shell.before
            shell.sendline("kill -9 %1")
            index = shell.expect(patterns, action.timeout)
            output += shell.before
            output += clean_output(shell.read_following(0.5))
            return _observation(output.strip(), 0, patterns[index])
        except TIMEOUT:
            raise TIMEOUT("Failed to interrupt session")

    def close(self):
        if self._shell is not None:
            self._shell.close()
            self._shell = None
        return {"session_type": "bash"}
