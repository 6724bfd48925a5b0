"""The flake8 check of the linting edits and how its output is filtered and printed (windowed-tools spec §7).

- Command: `flake8 --isolated --select=F821,F822,F831,E111,E112,E113,E999,E902 <file>` (0.1: without --isolated;
  1.x: registry `LINT_COMMAND` with `{file_path}` wins). Only `*.py` files are linted.
- 0.x captures stdout and stderr (`2>&1`); 1.x captures stdout only, so a missing flake8 means "no errors" there.
- 0.1–0.6.0 print every error line as "- " + its words after the first; 0.6.1+ parse `path:row:col: message`,
  drop errors that were already there before the edit (rows shifted past the edited window) and print
  "- <message>"; 1.x also drops rows above the window.
"""

import shutil
import subprocess
import sys
from typing import List, NamedTuple, Optional, Tuple

from . import state

SELECT = "--select=F821,F822,F831,E111,E112,E113,E999,E902"


class LintError(NamedTuple):
    filename: str
    row: int
    col: int
    message: str


def parse_line(line: str) -> LintError:
    prefix, _separator, message = line.partition(": ")
    filename, row, col = prefix.split(":")
    return LintError(filename, int(row), int(col), message)


def parse(output: str) -> List[LintError]:
    return [parse_line(line.strip()) for line in output.split("\n") if line.strip()]


def run_v0(path: str) -> str:
    """`$(flake8 ... "$CURRENT_FILE" 2>&1)`: stdout and stderr, trailing newlines dropped."""
    command = ["flake8"] + ([] if state.version() == "0.1" else ["--isolated"]) + [SELECT, path]
    if shutil.which("flake8") is None:
        return "bash: flake8: command not found"
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return done.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def run_v1(path: str, registry: state.Registry) -> str:
    if not path.endswith(".py"):
        return ""
    template = registry.get("LINT_COMMAND", "flake8 --isolated " + SELECT + " {file_path}")
    done = subprocess.run(template.format(file_path=path), shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return done.stdout.decode()


def shift_previous(previous: List[LintError], window: Tuple[int, int], replacement_lines: int) -> List[LintError]:
    """Where pre-edit errors would sit after the edit; errors inside the edited window are not kept."""
    start, end = window
    added = replacement_lines - (end - start + 1)
    shifted = []
    for error in previous:
        if error.row < start:
            shifted.append(error)
        elif error.row > end:
            shifted.append(error._replace(row=error.row + added))
    return shifted


def new_errors(after: str, before: str, window: Optional[Tuple[int, int]], replacement_lines: Optional[int], *, drop_above: bool) -> str:
    errors = parse(after)
    if before and window is not None and replacement_lines is not None:
        known = shift_previous(parse(before), window, replacement_lines)
        errors = [error for error in errors if error not in known]
        if drop_above:
            errors = [error for error in errors if error.row >= window[0]]
    return "\n".join("- " + error.message for error in errors)


def words_after_first(output: str) -> str:
    """0.1–0.6.0 `_split_string`: each line as "- " + its words after the first, single-spaced."""
    return "\n".join("- " + " ".join(line.split()[1:]) for line in output.split("\n"))


def filtered_v0(after: str, before: str, window: Tuple[int, int], replacement_lines: int) -> str:
    """0.6.1+ `_split_string` as a helper process: a line it cannot parse crashes it (traceback on stderr), and the
    captured output is then empty — the edit goes through."""
    try:
        return new_errors(after, before, window, replacement_lines, drop_above=False)
    except ValueError as error:
        sys.stdout.flush()
        sys.stderr.write("Traceback (most recent call last):\n  File \"_split_string\", in <module>\nValueError: {}\n".format(error))
        sys.stderr.flush()
        return ""
