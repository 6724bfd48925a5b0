"""The edits: line-range `edit s:e` with its lint check (0.x and 1.x `edit_linting`), search/replace `edit` and
`insert` (1.x `edit_replace`); windowed-tools spec §7, §8. Each returns the exit status."""

import argparse
import re
import sys
from typing import List, Optional

from . import lint, state
from .window import NoFileOpen, TextNotFound, Window, say
from .window_v0 import V0State

RULE_V0 = "-" * 49
RULE_V1 = "-" * 48
DIGITS = re.compile(r"^[0-9]+$")

V0_HEADER_OLD = "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand."
HEADER = "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file."
NOT_APPLIED = "Your changes have NOT been applied. Please fix your edit command and try again."
EITHER = "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code."
DO_NOT_RERUN = "DO NOT re-run the same failed edit command. Running it again will lead to the same error."
UPDATED_V0 = (
    "File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, "
    "etc). Edit the file again if necessary."
)
UPDATED_V1 = (
    "File updated. Please review the changes and make sure they are correct\n"
    "(correct indentation, no duplicate lines, etc). Edit the file again if necessary."
)
REVIEW_POINTS = (
    "Please review the changes and make sure they are correct:\n\n"
    "1. The edited file is correctly indented\n"
    "2. The edited file does not contain duplicate lines\n"
    "3. The edit does not break existing functionality\n\n"
    "Edit the file again if necessary."
)
NOT_APPLIED_PREFIX = "Your edit was not applied (file not modified): "


def _bash_div(numerator: int, denominator: int) -> int:
    """Bash `$(( a / b ))` truncates toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


# --- 0.x: edit s:e (shell function in the agent's session; replacement lines on stdin) --------------------------


def _stdin_lines() -> List[bytes]:
    """`while IFS= read -r line`: whole lines only (a last line without LF is not read)."""
    data = sys.stdin.buffer.read()
    lines = data.split(b"\n")
    return lines[:-1]


def edit_v0(args: List[str]) -> int:
    v0 = V0State()
    if not v0.current_file:
        say("No file open. Use the `open` command first.")
        return 0
    # `echo $1: | cut -d: -f1` and `-f2`: word splitting of an unquoted $1 joins its words with one space.
    spec = " ".join(args[0].split()) + ":" if args else ":"
    parts = spec.split(":")
    start_text, end_text = parts[0], parts[1] if len(parts) > 1 else ""
    if start_text == "" or end_text == "":
        say("Usage: edit <start_line>:<end_line>")
        return 0
    if not DIGITS.match(start_text):
        say("Usage: edit <start_line>:<end_line>")
        say("Error: start_line must be a number")
        return 0
    if not DIGITS.match(end_text):
        say("Usage: edit <start_line>:<end_line>")
        say("Error: end_line must be a number")
        return 0
    version = state.version()
    filters = version not in ("0.1", "0.3", "0.6")
    path = v0.current_file
    before = lint.run_v0(path) if filters else ""
    start, end = int(start_text) - 1, int(end_text)
    replacement = _stdin_lines()
    with open(path, "rb") as handle:
        original = handle.read()
    lines = original.split(b"\n")
    if original.endswith(b"\n") or not original:
        lines.pop()
    updated = lines[:start] + replacement + lines[end:]
    with open(path, "wb") as handle:
        handle.write(b"".join(line + b"\n" for line in updated) if updated else b"\n")
    errors = ""
    if path.endswith(".py"):
        after = lint.run_v0(path)
        if filters:
            errors = lint.filtered_v0(after, before, (start + 1, end), len(replacement))
        elif after:
            errors = lint.words_after_first(after)
    if not errors:
        v0.current_line = start
        v0.constrain()
        v0.show()
        say(UPDATED_V0)
        return 0
    say(V0_HEADER_OLD if version == "0.1" else HEADER)
    say("")
    say("ERRORS:")
    say(errors)
    say("")
    saved_line = v0.current_line
    say("This is how your edit would have looked if applied")
    say(RULE_V0)
    v0.current_line = _bash_div(len(replacement), 2) + start
    window = len(replacement) + 10
    v0.constrain(window)
    v0.show(window)
    say(RULE_V0)
    say("")
    with open(path, "wb") as handle:
        handle.write(original)
    v0.current_line = _bash_div(end - start + 1, 2) + start
    window = end - start + 10
    say("This is the original code before your edit")
    say(RULE_V0)
    v0.constrain(window)
    v0.show(window)
    say(RULE_V0)
    v0.current_line = saved_line
    say(NOT_APPLIED)
    say(EITHER)
    say(DO_NOT_RERUN)
    return 0


# --- 1.x: edit s:e (edit_linting) ------------------------------------------------------------------------------


def _lint_failure(window: Window, errors: str, header: str, *, blank_after_errors: bool, retry_token: bool) -> None:
    applied = window.window_text(decorated=True)
    window.undo()
    original = window.window_text(decorated=True)
    parts = [header, "", "ERRORS:"]
    if blank_after_errors:
        parts.append("")
    parts += [errors, "", "This is how your edit would have looked if applied", RULE_V1, applied, RULE_V1, "",
              "This is the original code before your edit", RULE_V1, original, RULE_V1, "", NOT_APPLIED, DO_NOT_RERUN]
    text = "\n".join(parts)
    say(text + "\n" if retry_token else text)
    if retry_token:
        say(state.RETRY_TOKEN)


def edit_linting_v1(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="edit")
    parser.add_argument("line_range", help="Line range in format start:end")
    parser.add_argument("replacement_text", help="Text to insert", nargs="?")
    args = parser.parse_args(argv)
    try:
        window = Window(report_errors=False)
    except NoFileOpen:
        say("No file opened. Use the `open` command first.")
        return 1
    try:
        first, last = (int(part) for part in args.line_range.split(":"))
    except ValueError:
        say("Usage: edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit")
        return 1
    start, end = first - 1, last - 1
    text = args.replacement_text
    if text is None:
        collected = []
        for line in sys.stdin:
            line = line[:-1] if line.endswith("\n") else line
            if line == "end_of_edit":
                break
            collected.append(line)
        text = "\n".join(collected)
    elif text.endswith("\n"):
        text = text[:-1]
    before = lint.run_v1(str(window.path), window.registry)
    window.replace_lines(text, (start, end))
    after = lint.run_v1(str(window.path), window.registry)
    errors = lint.new_errors(after, before, (start, end), len(text.splitlines()), drop_above=True)
    if errors:
        _lint_failure(window, errors, HEADER, blank_after_errors=False, retry_token=False)
        return 1
    window.goto(start)
    say(UPDATED_V1)
    window.show()
    return 0


# --- 1.x: edit <search> <replace> [<replace-all>] and insert <text> [<line>] (edit_replace) ------------------


def _bool_argument(value: str) -> bool:
    # argparse `type=bool`: any non-empty string, "False" included, is True.
    return bool(value)


def edit_replace_v1(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="edit")
    parser.add_argument("search", type=str)
    parser.add_argument("replace", type=str)
    parser.add_argument("replace_all", type=_bool_argument, nargs="?", default=False)
    args = parser.parse_args(argv)
    try:
        window = Window(report_errors=False)
    except NoFileOpen:
        say("No file opened. Either `open` or `create` a file first.")
        return 1
    search, replacement = args.search, args.replace
    if search == replacement:
        say("Your search and replace strings are the same. No changes were made. Please modify your search or replace strings.")
        say(state.RETRY_TOKEN)
        return 2
    before = lint.run_v1(str(window.path), window.registry)
    try:
        if not args.replace_all:
            if window.window_text().count(search) > 1:
                say(NOT_APPLIED_PREFIX + "Found more than one occurrence of {!r} in the currently displayed lines.\n".format(search)
                    + "Please make your search string more specific (for example, by including more lines of context).\n")
                say(state.RETRY_TOKEN)
                return 4
            first, search_lines, replace_lines = window.replace_in_window(search, replacement)
            count = 1
        else:
            first, search_lines, replace_lines, count = window.replace_everywhere(search, replacement)
    except TextNotFound:
        found = window.occurrences(search)
        if found:
            say(NOT_APPLIED_PREFIX + "Text {!r} not found in displayed lines.\n\n".format(search)
                + "However, we found the following occurrences of your search string in the file:\n\n"
                + "\n".join("- line {}".format(line) for line in found)
                + "\n\nYou can use the `goto` command to navigate to these locations before running the edit command again.\n")
        else:
            say(NOT_APPLIED_PREFIX + "Text {!r} not found in displayed lines (or anywhere in the file).\n".format(search)
                + "Please modify your search string. Did you forget to properly handle whitespace/indentation?\n"
                + "You can also call `open` again to re-display the file with the correct context.\n")
        say(state.RETRY_TOKEN)
        return 3
    after = lint.run_v1(str(window.path), window.registry)
    if args.replace_all:
        # Line numbers move too much to match old errors: every error is shown.
        errors = lint.new_errors(after, "", None, None, drop_above=False)
    else:
        errors = lint.new_errors(after, before, (first, first + search_lines - 1), replace_lines, drop_above=True)
    if errors:
        _lint_failure(window, errors, HEADER, blank_after_errors=True, retry_token=True)
        return 4
    lead = "Text replaced. " if not args.replace_all else "Replaced {} occurrences. ".format(count)
    say(lead + REVIEW_POINTS)
    window.show()
    return 0


def insert_v1(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="insert")
    parser.add_argument("text", type=str)
    parser.add_argument("line", type=int, nargs="?", default=None)
    args = parser.parse_args(argv)
    try:
        window = Window(report_errors=False)
    except NoFileOpen:
        say("No file opened. Use the `create` or `open` command first.")
        say(state.RETRY_TOKEN)
        return 1
    before = lint.run_v1(str(window.path), window.registry)
    line: Optional[int] = args.line
    if line is not None and state.version() != "main":
        # 1.0 and 1.1 insert before line N; main inserts after it.
        line -= 1
    first, added = window.insert(args.text, line)
    after = lint.run_v1(str(window.path), window.registry)
    errors = lint.new_errors(after, before, (first, first), added, drop_above=True)
    if errors:
        header = "Your proposed edit has introduced new syntax error(s).\nPlease read this error message carefully and then retry editing the file."
        _lint_failure(window, errors, header, blank_after_errors=True, retry_token=True)
        return 4
    window.show()
    return 0


def edit_tool(argv: List[str], flavour: str) -> int:
    if state.is_v0():
        return edit_v0(argv)
    return edit_linting_v1(argv) if flavour == "linting" else edit_replace_v1(argv)


def insert_tool(argv: List[str]) -> int:
    return insert_v1(argv)

