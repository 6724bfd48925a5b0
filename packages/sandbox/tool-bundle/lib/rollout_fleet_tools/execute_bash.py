"""execute_bash: run one command line in bash, passing stdout, stderr and the exit code straight through.

Accepted forms: `execute_bash '<cmd>'` (seed / veRL), `execute_bash --cmd '<cmd>'` (R2E-Gym),
`execute_bash --command '<cmd>'`, the `--cmd=<cmd>` spelling, and `execute_bash -- <cmd...>`.
Several positional words are joined with single spaces, like bash's "$*".
The process is replaced by bash (exec), so signals and the exit status are bash's own.
"""

import os
import sys
from typing import List, NoReturn, Optional

USAGE = "usage: execute_bash [-h] (<command> | --cmd <command> | --command <command>)\n"
FLAGS = ("--cmd", "--command")


def _usage_error(message: str) -> NoReturn:
    sys.stderr.write(USAGE + "execute_bash: error: {}\n".format(message))
    sys.exit(2)


def command_from_argv(argv: List[str]) -> str:
    if not argv:
        _usage_error("a command is required")
    first = argv[0]
    if first in ("-h", "--help") and len(argv) == 1:
        sys.stdout.write(USAGE)
        sys.exit(0)
    if first in FLAGS:
        if len(argv) < 2:
            _usage_error("argument {}: expected one argument".format(first))
        if len(argv) > 2:
            _usage_error("unrecognized arguments: {}".format(" ".join(argv[2:])))
        return argv[1]
    for flag in FLAGS:
        if first.startswith(flag + "="):
            if len(argv) > 1:
                _usage_error("unrecognized arguments: {}".format(" ".join(argv[1:])))
            return first[len(flag) + 1:]
    if first == "--":
        return " ".join(argv[1:])
    return " ".join(argv)


def main(argv: Optional[List[str]] = None) -> None:
    command = command_from_argv(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp("bash", ["bash", "-c", command])
    except OSError:
        # Images without bash still have a POSIX shell.
        os.execv("/bin/sh", ["sh", "-c", command])
